package kafka_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
)

// The processors' topic manager finds a topic's partitions and offsets, refuses a missing
// topic or another partition count, and creates nothing.
func TestTopicManagerChecksTopics(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		topic := testenv.UniqueName(t, "tm")
		adm := testenv.KafkaAdmin(t, brokers)
		if _, err := adm.CreateTopic(ctx, 4, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for range 3 {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: 1, Value: []byte("v")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}

		tm, err := kafka.Config{Brokers: brokers}.NewTopicManager()
		if err != nil {
			t.Fatal(err)
		}
		defer tm.Close()
		if got, err := tm.Partitions(topic); err != nil || !slices.Equal(got, []int32{0, 1, 2, 3}) {
			t.Fatalf("Partitions = %v, %v; want [0 1 2 3]", got, err)
		}
		if err := tm.EnsureStreamExists(topic, 4); err != nil {
			t.Fatalf("EnsureStreamExists with its partition count: %v", err)
		}
		if err := tm.EnsureTableExists(topic, 6); err == nil || !strings.Contains(err.Error(), "has 4 partitions") {
			t.Fatalf("EnsureTableExists with another partition count: %v", err)
		}
		for at, want := range map[int64]int64{sarama.OffsetOldest: 0, sarama.OffsetNewest: 3} {
			if got, err := tm.GetOffset(topic, 1, at); err != nil || got != want {
				t.Fatalf("GetOffset(%d) = %d, %v; want %d", at, got, err, want)
			}
		}

		missing := topic + "-missing"
		if err := tm.EnsureStreamExists(missing, 4); err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("EnsureStreamExists of a missing topic: %v", err)
		}
		if details, err := adm.ListTopics(ctx, missing); err != nil || details.Has(missing) && details[missing].Err == nil {
			t.Fatalf("the lookup created %s: %v", missing, err)
		}
	})
}

// The topic manager asks for the metadata of the topic it looks up, never for every topic of
// the cluster (goka's own did, for each lookup), and does not create a missing topic on a
// broker that would.
func TestTopicManagerAsksForItsTopicOnly(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.SeedTopics(4, "in", "other-1", "other-2"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var mu sync.Mutex
	var asked [][]string // the topics of every metadata request (nil: all of them)
	c.ControlKey(kmsg.Metadata.Int16(), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.MetadataRequest)
		var names []string
		if req.Topics != nil {
			names = []string{}
			for _, t := range req.Topics {
				names = append(names, *t.Topic)
			}
		}
		mu.Lock()
		asked = append(asked, names)
		mu.Unlock()
		return nil, nil, false
	})

	tm, err := kafka.Config{Brokers: c.ListenAddrs()}.NewTopicManager()
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close()
	if err := tm.EnsureStreamExists("in", 4); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.Partitions("in"); err != nil {
		t.Fatal(err)
	}
	if err := tm.EnsureTableExists("missing", 4); err == nil {
		t.Fatal("a missing topic passed")
	}
	if _, err := tm.Partitions("missing"); err == nil {
		t.Fatal("the lookup created the missing topic")
	}

	mu.Lock()
	defer mu.Unlock()
	if len(asked) == 0 {
		t.Fatal("no metadata request seen")
	}
	for _, names := range asked {
		if names == nil || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "other") }) {
			t.Fatalf("metadata requests %q: one asked for other topics", asked)
		}
	}
}
