package scorese2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/boardsfile"
	"github.com/rankstream/rankstream/internal/service/archive"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/scores"
	"github.com/rankstream/rankstream/topics"
)

// history is a run's ClickHouse database (e2e.History), read back as analysts see it.
type history struct{ *e2e.History }

func newHistory(t *testing.T) *history { return &history{e2e.NewHistory(t)} }

// visible returns the rows analysts see (under FINAL, without the versions) of
// board_member_scores and board_archive, one line each.
func (h *history) visible(t *testing.T) map[string]bool {
	t.Helper()
	ctx := context.Background()
	out := map[string]bool{}
	var scores []struct {
		Board   string `ch:"board"`
		Period  string `ch:"period"`
		Member  string `ch:"member"`
		Score   int64  `ch:"score"`
		Reached int64  `ch:"reached_ms"`
		Scope   string `ch:"scope"`
		Deleted uint8  `ch:"deleted"`
	}
	if err := h.Conn.Select(ctx, &scores, "SELECT board, period, member, score, reached_ms, scope, deleted FROM board_member_scores FINAL"); err != nil {
		t.Fatal(err)
	}
	for _, r := range scores {
		out[fmt.Sprintf("board_member_scores %+v", r)] = true
	}
	var archive []struct {
		Board  string `ch:"board"`
		Period string `ch:"period"`
		Rank   uint32 `ch:"rank"`
		Member string `ch:"member"`
		Score  int64  `ch:"score"`
	}
	if err := h.Conn.Select(ctx, &archive, "SELECT board, period, rank, member, score FROM board_archive FINAL"); err != nil {
		t.Fatal(err)
	}
	for _, r := range archive {
		out[fmt.Sprintf("board_archive %+v", r)] = true
	}
	return out
}

// replay runs `rankstream replay --group group` with the target flags and fails the test
// unless it moved the offsets.
func (r *scoresRun) replay(group string, target ...string) string {
	r.T.Helper()
	p := testenv.StartProcess(r.T, "replay-"+group, r.Bin, slices.Concat([]string{"replay", "--group", group}, r.KafkaFlags(), target)...)
	if err := p.Wait(); err != nil || !strings.Contains(p.Output(), "offsets moved") {
		r.T.Fatalf("rankstream replay --group %s %v: %v\n%s", group, target, err, p.Output())
	}
	return p.Output()
}

// stop stops every process of the run with SIGTERM and checks they stopped cleanly.
func (r *scoresRun) stop() {
	r.T.Helper()
	for _, p := range r.Processes {
		p.Signal(syscall.SIGTERM)
		if err := p.Wait(); err != nil {
			r.T.Fatalf("%s did not stop cleanly: %v\n%s", p.Name, err, p.Output())
		}
	}
	r.Processes = nil
}

// settled waits until the scores group committed every op and scores-totals every record of
// the table's changelog.
func (r *scoresRun) settled(records int) {
	r.T.Helper()
	adm := testenv.KafkaAdmin(r.T, r.Kafka.Brokers)
	n := r.Kafka.Names
	testenv.WaitCommitted(r.T, adm, string(n.Group(scores.Group)), string(n.Stream(topics.ScoresUpdated)), int64(records), 2*time.Minute)
	changelog := string(n.Table(scores.Group))
	testenv.WaitCommitted(r.T, adm, string(n.Group(scores.TotalsGroup)), changelog, r.Count(changelog), 2*time.Minute)
}

// waitSame waits until the run's Redis and ClickHouse hold exactly want, and reports the
// first differences if they never do.
func waitSame(t *testing.T, rdb *goredis.Client, h *history, wantRedis map[string]string, wantRows map[string]bool, timeout time.Duration) {
	t.Helper()
	var gotRedis map[string]string
	var gotRows map[string]bool
	deadline := time.Now().Add(timeout)
	for {
		gotRedis, gotRows = testenv.RedisDump(t, rdb), h.visible(t)
		if maps.Equal(gotRedis, wantRedis) && maps.Equal(gotRows, wantRows) {
			t.Logf("the same %d Redis keys and %d visible ClickHouse rows", len(gotRedis), len(gotRows))
			return
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	for _, d := range testenv.RedisDiff(wantRedis, gotRedis, 10) {
		t.Errorf("redis after the replay: %s", d)
	}
	n := 0
	for k := range wantRows {
		if !gotRows[k] && n < 15 {
			t.Errorf("missing after the replay: %s", k)
			n++
		}
	}
	for k := range gotRows {
		if !wantRows[k] && n < 20 {
			t.Errorf("only after the replay: %s", k)
			n++
		}
	}
	t.Fatalf("after %s: %d Redis keys and %d rows first, %d and %d after the replay", timeout, len(wantRedis), len(wantRows), len(gotRedis), len(gotRows))
}

// TestScoresReplayFromStartIsExact: a first run of `rankstream process --boards --history` on
// the generated score stream (3,000 ops with retries, deletes and invalid records) leaves the
// boards equal to the truth; its Redis database (every key, value and expiry) and the visible
// ClickHouse rows (board_member_scores and board_archive under FINAL) are kept. With the
// processes stopped, Redis flushed and both tables truncated, `rankstream replay --group
// scores --to-start` and `--group scores-totals --to-start`, then the processes started
// again, give back exactly the same Redis and the same visible rows: the ops replayed are
// duplicates of the kept table that re-send its entries, scores-totals writes the table again,
// and the archiver archives the finished periods again.
func TestScoresReplayFromStartIsExact(t *testing.T) {
	monday := lastMonday(time.Now())
	file := boardsFile(t, monday)
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		h := newHistory(t)
		records, truth, _ := e2e.ScoreStream(rand.New(rand.NewPCG(21, 1)), e2e.ScoreBoards(monday), members, opsPerMember, monday)
		r := newRun(t, brokers, file)
		produce(t, r.Kafka, records)
		r.start("first", h.Flags()...)
		r.waitExact(truth, 2*time.Minute)
		r.settled(len(records))
		// Every board (global and scopes) of a period that ended, with members, is archived.
		defs, err := boardsfile.Load(file)
		if err != nil {
			t.Fatal(err)
		}
		var rows map[string]bool
		testenv.WaitFor(t, 2*time.Minute, "every finished board archived", func() bool {
			due := 0
			for k, members := range truth {
				if w := windowOf(t, defs, k); len(members) > 0 && !w.End.IsZero() && w.End.Add(archive.DefaultGrace).Before(time.Now()) {
					due++
				}
			}
			var archived uint64
			if err := h.Conn.QueryRow(context.Background(), "SELECT uniqExact(board, period) FROM board_archive").Scan(&archived); err != nil {
				t.Fatal(err)
			}
			rows = h.visible(t)
			return due > 0 && archived == uint64(due)
		})
		first := testenv.RedisDump(t, r.Redis)
		r.stop()

		if err := r.Redis.FlushDB(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"board_member_scores", "board_archive"} {
			if err := h.Conn.Exec(context.Background(), "TRUNCATE TABLE "+table); err != nil {
				t.Fatal(err)
			}
		}
		if out := r.replay("scores", "--to-start"); !strings.Contains(out, fmt.Sprintf("records to reprocess: %d", len(records))) {
			t.Fatalf("replay of scores printed:\n%s", out)
		}
		r.replay("scores-totals", "--to-start")
		r.start("replayed", h.Flags()...)
		waitSame(t, r.Redis, h, first, rows, 2*time.Minute)
	})
}

// TestBoardAddedLaterIsBuiltByReplay: the generated stream names three boards, but the first
// run's boards file declares two of them, so the ops of the third (cup) go to the dead-letter
// topic as naming an undeclared board. With the processes stopped, `rankstream replay --group
// scores --to-time T` (T the record time of the middle op) and a restart with a boards file
// that declares cup too build cup from the ops stamped since T exactly (every page, rank and
// standing equal to the truth of those ops; its periods with ops before T only stay empty),
// while the two other boards, whose ops since T are duplicates of the kept table, keep every
// Redis key and value of the first run.
func TestBoardAddedLaterIsBuiltByReplay(t *testing.T) {
	monday := lastMonday(time.Now())
	all := e2e.ScoreBoards(monday)
	const added = "cup"
	before := slices.DeleteFunc(slices.Clone(all), func(b e2e.ScoreBoard) bool { return b.Name == added })
	fileBefore := filepath.Join(t.TempDir(), "boards-before.yaml")
	if err := os.WriteFile(fileBefore, []byte(e2e.ScoreBoardsYAML(before)), 0o644); err != nil {
		t.Fatal(err)
	}
	fileAfter := boardsFile(t, monday)
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		records, full, _ := e2e.ScoreStream(rand.New(rand.NewPCG(22, 1)), all, members, opsPerMember, monday)
		since := records[len(records)/2].Time
		_, backfilled, _ := e2e.ScoreStreamFrom(rand.New(rand.NewPCG(22, 1)), all, members, opsPerMember, monday, map[string]time.Time{added: since})
		first := e2e.ScoreTruth{}
		for k, rows := range full {
			if k.Board != added {
				first[k] = rows
			} else if _, ok := backfilled[k]; !ok {
				backfilled[k] = nil // ops before T only: the board stays empty
			}
		}
		r := newRun(t, brokers, fileAfter) // the API reads every board
		r.file = fileBefore
		produce(t, r.Kafka, records)
		r.start("first")
		r.waitExact(first, 2*time.Minute)
		adm := testenv.KafkaAdmin(t, brokers)
		n := r.Kafka.Names
		testenv.WaitCommitted(t, adm, string(n.Group(scores.Group)), string(n.Stream(topics.ScoresUpdated)), int64(len(records)), 2*time.Minute)
		kept := testenv.RedisDump(t, r.Redis)
		for k := range kept {
			if strings.HasPrefix(k, "rank:{"+added+":") {
				t.Fatalf("%s in Redis before the board was declared", k)
			}
		}
		r.stop()

		out := r.replay("scores", "--to-time", since.UTC().Format(time.RFC3339Nano))
		if !strings.Contains(out, "records to reprocess: ") || strings.Contains(out, fmt.Sprintf("records to reprocess: %d\n", len(records))) {
			t.Fatalf("a replay from the middle printed:\n%s", out)
		}
		r.file = fileAfter
		r.start("with-" + added)
		r.waitExact(backfilled, 2*time.Minute)
		testenv.WaitCommitted(t, adm, string(n.Group(scores.Group)), string(n.Stream(topics.ScoresUpdated)), int64(len(records)), 2*time.Minute)
		now := testenv.RedisDump(t, r.Redis)
		for k, v := range now {
			if !strings.HasPrefix(k, "rank:{"+added+":") && kept[k] != v {
				t.Errorf("%s: %q before the replay, %q after", k, kept[k], v)
			}
		}
		for k := range kept {
			if _, ok := now[k]; !ok {
				t.Errorf("%s: gone after the replay", k)
			}
		}
		t.Logf("%s built from the ops since %s; %d other keys unchanged", added, since.UTC().Format(time.RFC3339Nano), len(kept))
	})
}
