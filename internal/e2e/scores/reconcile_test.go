package scorese2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/scores"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// reconcile runs `rankstream reconcile` on the run's topics, Redis and boards file with args
// and returns its exit code and output.
func (r *scoresRun) reconcile(args ...string) (int, string) {
	r.T.Helper()
	return testenv.RunStatus(r.T, "reconcile", r.Bin, slices.Concat([]string{"reconcile"}, r.KafkaFlags(),
		[]string{"--redis", r.RedisURL(), "--boards", r.file}, args)...)
}

// TestReconcileScores: after a run of the generated score stream, stopped, `rankstream
// reconcile --board arena --period total` finds no difference and exits 0. Then Redis is
// corrupted on purpose with the sink's own encoding: a member removed from the global board, a
// member's score lowered, a stranger added, a scope board flushed (every shard). Reconcile
// finds each planted difference in its class, exactly that many, and exits 1; with --repair
// it rewrites them, finds none after, exits 0, and Redis holds exactly what the run left.
func TestReconcileScores(t *testing.T) {
	monday := lastMonday(time.Now())
	file := boardsFile(t, monday)
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		records, truth, _ := e2e.ScoreStream(rand.New(rand.NewPCG(23, 1)), e2e.ScoreBoards(monday), members, opsPerMember, monday)
		r := newRun(t, brokers, file)
		produce(t, r.Kafka, records)
		r.start("process")
		r.waitExact(truth, 2*time.Minute)
		n := r.Kafka.Names
		testenv.WaitCommitted(t, testenv.KafkaAdmin(t, brokers), string(n.Group(scores.Group)), string(n.Stream(topics.ScoresUpdated)), int64(len(records)), time.Minute)
		r.stop()
		first := testenv.RedisDump(t, r.Redis)
		code, out := r.reconcile("--board", "arena", "--period", "total")
		if code != 0 || !strings.Contains(out, "0 differences") {
			t.Fatalf("a clean system: exit %d\n%s", code, out)
		}

		// The scope board with the most members is flushed; the other corruptions hit members
		// of the global board that are not on it.
		var scope string
		for k, rows := range truth {
			if k.Board == "arena" && k.Period == "total" && k.Scope != "global" && (scope == "" || len(rows) > len(truth[e2e.ScoreKey{Board: "arena", Period: "total", Scope: scope}])) {
				scope = k.Scope
			}
		}
		flushed := truth[e2e.ScoreKey{Board: "arena", Period: "total", Scope: scope}]
		var victims []e2e.ScoreRow
		for _, row := range truth[e2e.ScoreKey{Board: "arena", Period: "total", Scope: "global"}] {
			if !slices.ContainsFunc(flushed, func(f e2e.ScoreRow) bool { return f.Member == row.Member }) {
				victims = append(victims, row)
			}
		}
		if len(flushed) == 0 || len(victims) < 2 {
			t.Fatalf("scope %q: %d members, %d others", scope, len(flushed), len(victims))
		}
		ctx := context.Background()
		ref := rsredis.BoardRef{Board: "arena", Period: board.PeriodTotal, Shards: 4}
		w := rsredis.NewBoardWriter(r.Redis)
		if err := w.Write(ctx, []rsredis.BoardWrite{
			{Ref: ref, Member: victims[0].Member}, // missing
			{Ref: ref, Member: victims[1].Member, Present: true, Score: victims[1].Score - 7, ReachedMs: victims[1].Reached}, // wrong order
			{Ref: ref, Member: "zz-stranger", Present: true, Score: 1, ReachedMs: victims[1].Reached},                        // extra
		}); err != nil {
			t.Fatal(err)
		}
		for i := range ref.Shards {
			sref := ref
			sref.Scope = scope
			if err := r.Redis.Del(ctx, rsredis.ScoreBoardKey(sref, i), rsredis.ScoreBoardMembersKey(sref, i)).Err(); err != nil {
				t.Fatal(err)
			}
		}
		counts := fmt.Sprintf("%d differences (missing %d, stale 0, extra 1, wrong order 1)", 1+len(flushed)+2, 1+len(flushed))
		code, out = r.reconcile("--board", "arena", "--period", "total")
		if code != 1 || !strings.Contains(out, counts) {
			t.Fatalf("after the corruption: exit %d, want 1 and %q\n%s", code, counts, out)
		}
		code, out = r.reconcile("--board", "arena", "--period", "total", "--repair")
		if code != 0 || !strings.Contains(out, counts) || !strings.Contains(out, "after the repair: 0 differences") {
			t.Fatalf("repair: exit %d\n%s", code, out)
		}
		if d := testenv.RedisDiff(first, testenv.RedisDump(t, r.Redis), 20); len(d) > 0 {
			t.Fatalf("Redis after the repair differs from after the run:\n%s", strings.Join(d, "\n"))
		}
		t.Logf("scope %s flushed (%d members): every planted difference found and repaired exactly\n%s", scope, len(flushed), out)
	})
}
