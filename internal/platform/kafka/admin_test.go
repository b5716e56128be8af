package kafka_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

func TestEnsureTopicsCreatesThenVerifies(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		kc := kafka.Config{Brokers: brokers, Partitions: 4, Names: topics.Names{Prefix: testenv.UniqueName(t, "admin") + "."}}
		cl := newClient(t, kc)

		if _, err := cl.EnsureTopics(ctx, false); !errors.Is(err, kafka.ErrTopicMismatch) || !strings.Contains(err.Error(), "missing") {
			t.Fatalf("verify before create: %v", err)
		}
		res, err := cl.EnsureTopics(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if !r.Created {
				t.Fatalf("%s not created", r.Name)
			}
		}
		if _, err := cl.EnsureTopics(ctx, false); err != nil {
			t.Fatalf("verify after create: %v", err)
		}

		configs, err := cl.Admin().DescribeTopicConfigs(ctx, string(kc.Names.Table(topics.StepsGroup)))
		if err != nil {
			t.Fatal(err)
		}
		rc, _ := configs.On(string(kc.Names.Table(topics.StepsGroup)), nil)
		compact := false
		for _, c := range rc.Configs {
			compact = compact || c.Key == "cleanup.policy" && c.MaybeValue() == "compact"
		}
		if !compact {
			t.Fatal("group table is not compacted")
		}

		// The same names with another partition count break co-partitioning: reported.
		kc.Partitions = 6
		if _, err := newClient(t, kc).EnsureTopics(ctx, true); !errors.Is(err, kafka.ErrTopicMismatch) || !strings.Contains(err.Error(), "4 partitions, want 6") {
			t.Fatalf("mismatch not reported: %v", err)
		}
	})
}

func TestResetOffsetsToStart(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		kc := kafka.Config{Brokers: brokers, Partitions: 2, Names: topics.Names{Prefix: testenv.UniqueName(t, "reset") + "."}}
		cl := newClient(t, kc)
		if _, err := cl.EnsureTopics(ctx, true); err != nil {
			t.Fatal(err)
		}
		offs, err := cl.ResetOffsets(ctx, "g", kc.Names.Stream(topics.StepsReported), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		offs.Each(func(o kadm.Offset) {
			n++
			if o.At != 0 {
				t.Errorf("partition %d reset to %d, want 0", o.Partition, o.At)
			}
		})
		if n != 2 {
			t.Fatalf("%d partitions reset, want 2", n)
		}
	})
}

// newClient returns a Client of kc, closed when the test ends.
func newClient(t *testing.T, kc kafka.Config) *kafka.Client {
	t.Helper()
	cl, err := kafka.NewClient(kc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}
