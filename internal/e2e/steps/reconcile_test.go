package stepse2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/testenv"
)

// reconcile runs `rankstream reconcile` on the run's topics and Redis with args and returns
// its exit code and output.
func (e *stepsRun) reconcile(args ...string) (int, string) {
	e.T.Helper()
	return testenv.RunStatus(e.T, "reconcile", e.Bin, slices.Concat([]string{"reconcile"}, e.KafkaFlags(), []string{"--redis", e.RedisURL()}, args)...)
}

// TestReconcileSteps: after a run of 4,000 reports (400 users, several days and regions),
// stopped, `rankstream reconcile --day D` (D the day with the most users) finds no
// difference and exits 0. Then Redis is corrupted on purpose: a step key deleted, a step key
// lowered, a member's score lowered on the global board, a stranger added (a step key and a
// global board member), a region board flushed. Reconcile finds each planted difference in
// its class (missing, stale, extra, wrong order), exactly that many, and exits 1; with
// --repair it rewrites them, finds none after, exits 0, and Redis holds exactly what the run
// left (every key, value, member, score and expiry).
func TestReconcileSteps(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		e := newE2E(t, brokers)
		records, want := generate(31, 4_000, 400, time.Now())
		p := e.Start("process")
		e.produce(records, 0)
		e.waitExact(want, 2*time.Minute)
		group, topic := e.groupAndTopic()
		testenv.WaitCommitted(t, testenv.KafkaAdmin(t, brokers), group, topic, int64(len(records)), time.Minute)
		p.Signal(syscall.SIGTERM)
		if err := p.Wait(); err != nil {
			t.Fatalf("the run did not stop cleanly: %v\n%s", err, p.Output())
		}
		e.Processes = nil
		first := e.dump()

		users := map[string][]string{} // day -> users with a step key
		var regionBoards []string
		for k := range first {
			if rest, ok := strings.CutPrefix(k, "step:"); ok {
				day, user, _ := strings.Cut(rest, ":")
				users[day] = append(users[day], user)
			}
		}
		day := slices.MaxFunc(slices.Sorted(maps.Keys(users)), func(a, b string) int { return len(users[a]) - len(users[b]) })
		for k := range first {
			if strings.HasPrefix(k, "rank:steps:region:") && strings.HasSuffix(k, ":"+day) {
				regionBoards = append(regionBoards, k)
			}
		}
		slices.Sort(regionBoards)
		us := users[day]
		slices.Sort(us)
		if len(us) < 10 || len(regionBoards) == 0 {
			t.Fatalf("day %s: %d users, region boards %v", day, len(us), regionBoards)
		}
		code, out := e.reconcile("--day", day)
		if code != 0 || !strings.Contains(out, "0 differences") {
			t.Fatalf("a clean system: exit %d\n%s", code, out)
		}

		ctx := context.Background()
		flushed := regionBoards[0]
		onFlushed := e.Redis.ZRange(ctx, flushed, 0, -1).Val()
		// Corrupt users that are not on the flushed board, each once.
		var victims []string
		for _, u := range us {
			if !slices.Contains(onFlushed, u) {
				victims = append(victims, u)
			}
		}
		global := "rank:steps:global:" + day
		key := func(u string) string { return "step:" + day + ":" + u }
		pipe := e.Redis.TxPipeline()
		pipe.Del(ctx, key(victims[0]))                                                                                    // missing
		pipe.SetArgs(ctx, key(victims[1]), e.Redis.Get(ctx, key(victims[1])).Val()+"0", goredis.SetArgs{KeepTTL: true})   // stale (higher)
		pipe.DecrBy(ctx, key(victims[2]), 1)                                                                              // stale (lower)
		pipe.ZAdd(ctx, global, goredis.Z{Member: victims[3], Score: e.Redis.ZScore(ctx, global, victims[3]).Val() - 1e6}) // wrong order
		pipe.Set(ctx, key("zz-stranger"), 12345, time.Hour)                                                               // extra
		pipe.ZAdd(ctx, global, goredis.Z{Member: "zz-stranger", Score: 1})                                                // extra
		pipe.Del(ctx, flushed)                                                                                            // missing, each member
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		counts := fmt.Sprintf("%d differences (missing %d, stale 2, extra 2, wrong order 1)", 1+len(onFlushed)+5, 1+len(onFlushed))
		code, out = e.reconcile("--day", day)
		if code != 1 || !strings.Contains(out, counts) {
			t.Fatalf("after the corruption: exit %d, want 1 and %q\n%s", code, counts, out)
		}
		code, out = e.reconcile("--day", day, "--repair")
		if code != 0 || !strings.Contains(out, counts) || !strings.Contains(out, "after the repair: 0 differences") {
			t.Fatalf("repair: exit %d\n%s", code, out)
		}
		if d := testenv.RedisDiff(first, e.dump(), 20); len(d) > 0 {
			t.Fatalf("Redis after the repair differs from after the run:\n%s", strings.Join(d, "\n"))
		}
		t.Logf("day %s, %d users, flushed %s (%d members): every planted difference found and repaired exactly\n%s", day, len(us), flushed, len(onFlushed), out)
	})
}
