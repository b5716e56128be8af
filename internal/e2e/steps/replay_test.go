package stepse2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rankstream/rankstream/internal/testenv"
)

// TestReplayFromStartIsExact: after a first run of 20k reports (2k users, duplicates and stale
// readings), `rankstream replay --group steps --to-start --dry-run` prints the plan and moves
// nothing; with Redis flushed, `rankstream replay --group steps --to-start --follow` moves the
// offsets, follows the restarted processor until it caught up, and Redis then holds exactly
// what the first run left: every key, value, board member, score and expiry.
func TestReplayFromStartIsExact(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		e := newE2E(t, brokers)
		records, want := generate(7, 20_000, 2_000, time.Now())
		first := e.Start("first")
		e.produce(records, 0)
		e.waitExact(want, 2*time.Minute)
		group, topic := e.groupAndTopic()
		adm := testenv.KafkaAdmin(t, brokers)
		testenv.WaitCommitted(t, adm, group, topic, int64(len(records)), time.Minute)
		firstRun := e.dump()
		first.Signal(syscall.SIGTERM)
		if err := first.Wait(); err != nil {
			t.Fatalf("the first run did not stop cleanly: %v\n%s", err, first.Output())
		}
		e.Processes = nil

		args := append([]string{"replay", "--group", "steps", "--to-start"}, e.KafkaFlags()...)
		dry := testenv.StartProcess(t, "dry-run", e.Bin, append(args, "--dry-run")...)
		if err := dry.Wait(); err != nil {
			t.Fatalf("dry run: %v\n%s", err, dry.Output())
		}
		if out := dry.Output(); !strings.Contains(out, fmt.Sprintf("records to reprocess: %d", len(records))) || !strings.Contains(out, "dry run: nothing changed") {
			t.Fatalf("dry run printed:\n%s", out)
		}
		if got := testenv.Committed(adm, group, topic); got != int64(len(records)) {
			t.Fatalf("after the dry run the group committed %d records, want %d (unchanged)", got, len(records))
		}

		if err := e.Redis.FlushDB(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		follow := testenv.StartProcess(t, "replay", e.Bin, append(args, "--follow")...)
		testenv.WaitFor(t, time.Minute, "the offsets moved", func() bool {
			return strings.Contains(follow.Output(), "offsets moved") || follow.Exited() != nil
		})
		if got := testenv.Committed(adm, group, topic); got != 0 {
			t.Fatalf("after the replay the group committed %d records, want 0", got)
		}
		e.Start("replayed")
		testenv.WaitFor(t, 2*time.Minute, "the replay followed to the end", func() bool { return follow.Exited() != nil })
		if err := follow.Wait(); err != nil {
			t.Fatalf("replay --follow: %v\n%s", err, follow.Output())
		}
		if out := follow.Output(); !strings.Contains(out, fmt.Sprintf("caught up: %d records", len(records))) || !strings.Contains(out, "replay: progress") {
			t.Fatalf("replay --follow printed:\n%s", out)
		}
		// The group commits after Redis took the values: caught up means written.
		replayed := e.dump()
		if d := testenv.RedisDiff(firstRun, replayed, 10); len(d) > 0 {
			t.Fatalf("the replay left %d keys, the first run %d:\n%s", len(replayed), len(firstRun), strings.Join(d, "\n"))
		}
		t.Logf("%d keys equal after the replay", len(replayed))
	})
}
