package replay_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/replay"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// TestReplayPlanAndRefusal: on steps.reported with 10 records per partition (record i of a
// partition stamped base + i s) and the steps group committed at the end:
//   - a dry run prints the plan and changes no offset;
//   - a live member of the group (a consumer joined to it) makes the replay refuse, naming it,
//     and changes nothing;
//   - --to-offset moves only the partitions named, --to-time every partition to its first
//     record at or after the time, --to-start to the start;
//   - hot refuses anything but --to-start.
func TestReplayPlanAndRefusal(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		const parts, perPart = 4, 10
		kc := kafka.Config{Brokers: brokers, Partitions: parts, Replication: 1,
			Names: topics.Names{Prefix: testenv.UniqueName(t, "replay") + "."}}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cl := e2e.KafkaClient(t, kc)
		group, topic := string(kc.Names.Group(steps.Group)), string(kc.Names.Stream(topics.StepsReported))
		base := time.Now().Add(-time.Hour).Truncate(time.Second)
		var recs []*kgo.Record
		for p := range int32(parts) {
			for i := range perPart {
				recs = append(recs, kafka.InPartition(&kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte("v"),
					Timestamp: base.Add(time.Duration(i) * time.Second)}, p))
			}
		}
		if err := cl.ProduceSync(ctx, recs...); err != nil {
			t.Fatal(err)
		}
		atEnd := func() {
			t.Helper()
			moves, err := cl.PlanReset(ctx, group, topic, kafka.Target{Offsets: map[int32]int64{0: perPart, 1: perPart, 2: perPart, 3: perPart}})
			if err == nil {
				_, err = cl.CommitReset(ctx, group, topic, moves)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		committed := func() string {
			t.Helper()
			c, err := cl.Committed(ctx, group, topic)
			if err != nil {
				t.Fatal(err)
			}
			return fmt.Sprint(c)
		}
		run := func(cfg replay.Config) (string, error) {
			cfg.Kafka = kc
			var out bytes.Buffer
			err := replay.Run(ctx, cfg, &out, slog.New(slog.NewTextHandler(io.Discard, nil)))
			return out.String(), err
		}
		atEnd()
		before := committed()

		out, err := run(replay.Config{Group: "steps", DryRun: true})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, fmt.Sprintf("records to reprocess: %d", parts*perPart)) || !strings.Contains(out, "dry run: nothing changed") ||
			!strings.Contains(out, fmt.Sprintf("%9d %12d -> %12d %12d", 2, perPart, 0, perPart)) {
			t.Fatalf("dry-run plan:\n%s", out)
		}
		if after := committed(); after != before {
			t.Fatalf("a dry run moved the offsets: %s, then %s", before, after)
		}

		t.Run("live member", func(t *testing.T) {
			member, err := kc.KgoClient(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.ClientID("live-processor"))
			if err != nil {
				t.Fatal(err)
			}
			testenv.WaitFor(t, 30*time.Second, "the consumer joined the group", func() bool {
				pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
				member.PollFetches(pctx)
				m, err := cl.Members(ctx, group)
				return err == nil && len(m) == 1
			})
			_, err = run(replay.Config{Group: "steps"})
			member.Close()
			if !errors.Is(err, replay.ErrLiveMembers) || !strings.Contains(err.Error(), "live-processor@") {
				t.Fatalf("replay with a live member: %v, want ErrLiveMembers naming live-processor", err)
			}
			if after := committed(); after != before {
				t.Fatalf("a refused replay moved the offsets: %s, then %s", before, after)
			}
		})
		// The member left (Close leaves the group); the broker forgets it at once.
		testenv.WaitFor(t, 30*time.Second, "the group empty", func() bool {
			m, err := cl.Members(ctx, group)
			return err == nil && len(m) == 0
		})

		for _, c := range []struct {
			name   string
			target kafka.Target
			want   string
		}{
			{"to-offset", kafka.Target{Offsets: map[int32]int64{1: 3, 3: 0}}, fmt.Sprint(map[int32]int64{0: 10, 1: 3, 2: 10, 3: 0})},
			{"to-time", kafka.Target{Time: base.Add(7 * time.Second)}, fmt.Sprint(map[int32]int64{0: 7, 1: 7, 2: 7, 3: 7})},
			{"to-time after the end", kafka.Target{Time: base.Add(time.Hour)}, fmt.Sprint(map[int32]int64{0: 10, 1: 10, 2: 10, 3: 10})},
			{"to-start", kafka.Target{}, fmt.Sprint(map[int32]int64{0: 0, 1: 0, 2: 0, 3: 0})},
		} {
			t.Run(c.name, func(t *testing.T) {
				atEnd()
				if _, err := run(replay.Config{Group: "steps", Target: c.target}); err != nil {
					t.Fatal(err)
				}
				if got := committed(); got != c.want {
					t.Fatalf("committed %s, want %s", got, c.want)
				}
			})
		}
		if _, err := run(replay.Config{Group: "steps", Target: kafka.Target{Offsets: map[int32]int64{0: perPart + 1}}}); err == nil {
			t.Fatal("an offset beyond the end was accepted")
		}
		if _, err := run(replay.Config{Group: "hot", Target: kafka.Target{Time: base}}); err == nil || !strings.Contains(err.Error(), "only from the start") {
			t.Fatalf("hot --to-time: %v, want a refusal", err)
		}
		if _, err := run(replay.Config{Group: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown group "nope" (known: `+strings.Join(replay.Groups(), ", ")+")") {
			t.Fatalf("unknown group: %v", err)
		}
	})
}
