package scorese2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/boardsfile"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/service/archive"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// Shape of the generated stream: 120 members with 25 ops each, 3,000 records in all.
const (
	members      = 120
	opsPerMember = 25
)

// lastMonday is the latest Monday 00:00 UTC whose stream (until 08:00 that Monday) lies
// before now: record timestamps stay in the past, and the boards' 30 days of retention keep
// every key alive.
func lastMonday(now time.Time) time.Time {
	d := now.UTC().Truncate(24 * time.Hour)
	d = d.AddDate(0, 0, -int((d.Weekday()+6)%7))
	if d.Add(8 * time.Hour).After(now) {
		d = d.AddDate(0, 0, -7)
	}
	return d
}

// boardsFile writes the boards of the tests around monday and returns its path.
func boardsFile(t *testing.T, monday time.Time) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "boards.yaml")
	if err := os.WriteFile(file, []byte(e2e.ScoreBoardsYAML(e2e.ScoreBoards(monday))), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// scoresRun is one end-to-end run (e2e.Run) of the boards of file, with the HTTP API on its
// database.
type scoresRun struct {
	*e2e.Run
	file string
	c    *checker
}

func newRun(t testing.TB, brokers []string, file string) *scoresRun {
	t.Helper()
	r := &scoresRun{Run: e2e.NewRun(t, brokers, "scores"), file: file}
	bs, err := boardsfile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	r.c = &checker{t: t, base: r.API(api.WithBoards(bs))}
	return r
}

// start runs `rankstream process --boards` with its defaults (the flush interval included) for
// this run's topics and Redis database, with extra flags.
func (r *scoresRun) start(name string, extra ...string) *testenv.Process {
	r.T.Helper()
	return r.Start(name, append([]string{"--boards", r.file}, extra...)...)
}

// waitExact waits until every page of every board equals the truth, then checks every
// member's standing.
func (r *scoresRun) waitExact(truth e2e.ScoreTruth, timeout time.Duration) {
	r.T.Helper()
	deadline := time.Now().Add(timeout)
	for {
		problem := r.c.pages(truth)
		if problem == "" {
			break
		}
		for _, p := range r.Processes {
			if err := p.Exited(); err != nil {
				r.T.Fatalf("%s exited: %v\n%s", p.Name, err, p.Output())
			}
		}
		if time.Now().After(deadline) {
			r.T.Fatalf("after %s: %s", timeout, problem)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if problem := r.c.standings(truth); problem != "" {
		r.T.Fatal(problem)
	}
	rows, empty := 0, 0
	for _, rs := range truth {
		rows += len(rs)
		if len(rs) == 0 {
			empty++
		}
	}
	r.T.Logf("exact: %d boards (%d empty), %d ranked entries", len(truth), empty, rows)
}

// TestScoreBoardsEndToEnd: `rankstream process --boards` on a generated stream of set, incr
// and delete ops over three boards (periods crossing midnight and a week boundary in
// Asia/Shanghai, UTC and America/New_York, two seasons meeting at midnight UTC, shards 4, 1
// and 3), with retried request ids carrying other values, ties, negative increments and
// invalid records: every page of every board, period and scope (empty ones included), and
// every member's rank, score, reach time and neighbours, read through the HTTP API, equal the
// truth computed by the harness; exactly the invalid records are in the dead-letter topic.
func TestScoreBoardsEndToEnd(t *testing.T) {
	monday := lastMonday(time.Now())
	file := boardsFile(t, monday)
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		records, truth, invalid := e2e.ScoreStream(rand.New(rand.NewPCG(11, 1)), e2e.ScoreBoards(monday), members, opsPerMember, monday)
		r := newRun(t, brokers, file)
		r.start("process")
		produce(t, r.Kafka, records)
		r.waitExact(truth, 90*time.Second)
		testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("%d dead letters", invalid), func() bool {
			n := r.DeadLetters()
			if n > int64(invalid) {
				t.Fatalf("%d dead letters, want %d", n, invalid)
			}
			return n == int64(invalid)
		})
		t.Logf("%d records, %d invalid", len(records), invalid)
	})
}

// TestScoreBoardsAfterKillWithTwoInstances: two instances share the partitions; one is killed
// with SIGKILL mid-stream (records in its table whose entries may not have reached Redis,
// offsets not committed) and started again while the rest of the stream arrives: the boards
// end exactly equal to the truth, because a redelivered op, a duplicate by then, re-sends its
// entries as the table keeps them. A redelivered invalid record is dead-lettered again, so
// there are at least as many dead letters as invalid records.
func TestScoreBoardsAfterKillWithTwoInstances(t *testing.T) {
	monday := lastMonday(time.Now())
	file := boardsFile(t, monday)
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		records, truth, invalid := e2e.ScoreStream(rand.New(rand.NewPCG(12, 1)), e2e.ScoreBoards(monday), members, opsPerMember, monday)
		r := newRun(t, brokers, file)
		a := r.start("process-a")
		r.start("process-b")
		half := len(records) / 2
		produce(t, r.Kafka, records[:half])
		testenv.WaitFor(t, time.Minute, "some dead letters before the kill", func() bool { return r.DeadLetters() > int64(invalid)/10 })
		a.Signal(syscall.SIGKILL)
		_ = a.Wait()
		r.Processes = r.Processes[1:]
		produce(t, r.Kafka, records[half:])
		r.start("process-a-again")
		r.waitExact(truth, 2*time.Minute)
		testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("at least %d dead letters", invalid), func() bool { return r.DeadLetters() >= int64(invalid) })
	})
}

// TestScoreHistoryEndToEnd: `rankstream process --boards --history` on the generated stream
// (already in the topic when it starts, as a backlog): ClickHouse's board_member_scores holds,
// under FINAL, every member's latest score and reach time on every period of every board,
// equal to the truth; and board_archive holds the global and every scope board of every period
// that ended (plus the grace) before the test began, equal to the truth rank by rank, and
// nothing of a period that has not ended.
func TestScoreHistoryEndToEnd(t *testing.T) {
	start := time.Now()
	monday := lastMonday(start)
	file := boardsFile(t, monday)
	defs, err := boardsfile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		h := e2e.NewHistory(t)
		addr, database, conn := h.Addr, h.Database, h.Conn
		records, truth, _ := e2e.ScoreStream(rand.New(rand.NewPCG(13, 1)), e2e.ScoreBoards(monday), members, opsPerMember, monday)
		r := newRun(t, brokers, file)
		produce(t, r.Kafka, records)
		r.start("process", "--history", "--clickhouse", addr, "--clickhouse-database", database)
		r.waitExact(truth, 2*time.Minute)

		type row struct {
			Member string `ch:"member"`
			Score  int64  `ch:"score"`
			Ms     int64  `ch:"reached_ms"`
		}
		window := func(k e2e.ScoreKey) board.Window { return windowOf(t, defs, k) }
		archived, open := 0, 0
		problem := func() string {
			archived, open = 0, 0
			for k, rows := range truth {
				period := k.Period
				if k.Scope == "global" {
					var got []row
					if err := conn.Select(ctx, &got, `SELECT member, score, reached_ms FROM board_member_scores FINAL
						WHERE board = ? AND period = ? AND deleted = 0 ORDER BY score DESC, reached_ms, member`, k.Board, k.Period); err != nil {
						t.Fatal(err)
					}
					want := make([]row, len(rows))
					for i, x := range rows {
						want[i] = row{x.Member, x.Score, x.Reached}
					}
					if !slices.Equal(got, want) {
						return fmt.Sprintf("board_member_scores of %s %s: %v, want %v", k.Board, k.Period, got, want)
					}
				} else {
					period += ":s:" + k.Scope
				}
				var ranks []struct {
					Rank   uint32 `ch:"rank"`
					Member string `ch:"member"`
					Score  int64  `ch:"score"`
				}
				if err := conn.Select(ctx, &ranks, "SELECT rank, member, score FROM board_archive FINAL WHERE board = ? AND period = ? ORDER BY rank", k.Board, period); err != nil {
					t.Fatal(err)
				}
				w := window(k)
				if w.End.IsZero() || w.End.Add(archive.DefaultGrace).After(start) {
					open++
					if !w.End.IsZero() && w.End.Add(archive.DefaultGrace).After(time.Now()) && len(ranks) > 0 {
						t.Fatalf("board_archive holds %s %s, which ends at %s", k.Board, period, w.End)
					}
					continue
				}
				archived++
				if len(ranks) != len(rows) {
					return fmt.Sprintf("board_archive of %s %s: %d ranks, want %d", k.Board, period, len(ranks), len(rows))
				}
				for i, x := range ranks {
					if x.Rank != uint32(i+1) || x.Member != rows[i].Member || x.Score != rows[i].Score {
						t.Fatalf("board_archive of %s %s: rank %d = %+v, want %+v", k.Board, period, i+1, x, rows[i])
					}
				}
			}
			return ""
		}
		last := ""
		t.Cleanup(func() {
			if t.Failed() {
				t.Log("last difference:", last)
			}
		})
		testenv.WaitFor(t, 2*time.Minute, "ClickHouse's member scores and archives equal the truth", func() bool {
			last = problem()
			return last == ""
		})
		if archived == 0 {
			t.Fatalf("no finished period among the %d boards", len(truth))
		}
		t.Logf("%d finished boards (global and scopes) archived exactly, %d open", archived, open)
	})
}

// windowOf returns the window of k's period on its board of defs.
func windowOf(t *testing.T, defs []*board.Board, k e2e.ScoreKey) board.Window {
	t.Helper()
	for _, b := range defs {
		if b.Name == k.Board {
			p, id, _ := strings.Cut(k.Period, ":")
			if p == "total" {
				id = "total"
			}
			w, ok := b.WindowByID(board.Period(p), id)
			if !ok {
				t.Fatalf("no window %s of %s", k.Period, k.Board)
			}
			return w
		}
	}
	t.Fatalf("no board %s", k.Board)
	return board.Window{}
}

// produce sends the records with their timestamps, in order, and waits for the acks.
func produce(t testing.TB, kc kafka.Config, records []e2e.Record) {
	t.Helper()
	produceTo(t, kc, topics.ScoresUpdated, records)
}

// produceTo produces records to stream and waits until Kafka acknowledged them all.
func produceTo(t testing.TB, kc kafka.Config, stream goka.Stream, records []e2e.Record) {
	t.Helper()
	cl, err := kc.KgoClient(kgo.ProducerLinger(5 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	topic := string(kc.Names.Stream(stream))
	errs := make(chan error, 1)
	for _, r := range records {
		cl.Produce(context.Background(), &kgo.Record{Topic: topic, Key: []byte(r.Key), Value: r.Value, Timestamp: r.Time}, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		t.Fatalf("produce: %v", err)
	default:
	}
}

// checker reads boards through the HTTP API.
type checker struct {
	t    testing.TB
	base string
}

// get GETs path into v (a 503 with Retry-After is asked again: testenv.Get).
func (c *checker) get(path string, v any) int {
	c.t.Helper()
	code, body := testenv.Get(c.t, c.base+path)
	if code == http.StatusOK {
		if err := json.Unmarshal(body, v); err != nil {
			c.t.Fatalf("GET %s: %v: %s", path, err, body)
		}
	}
	return code
}

func query(k e2e.ScoreKey) string {
	return "period=" + url.QueryEscape(k.Period) + "&scope=" + url.QueryEscape(k.Scope)
}

func same(e api.Entry, rank int, r e2e.ScoreRow) bool {
	return e.Rank == int64(rank) && e.Member == r.Member && e.Score == r.Score && e.ReachedAt.UnixMilli() == r.Reached
}

// pages reads every page (limit 100) of every board of the truth and says how the first one
// that differs does ("" when none does).
func (c *checker) pages(truth e2e.ScoreTruth) string {
	for k, want := range truth {
		for offset := 0; offset == 0 || offset < len(want); offset += 100 {
			path := fmt.Sprintf("/v1/boards/%s?%s&offset=%d&limit=100", k.Board, query(k), offset)
			var p api.BoardPage
			if code := c.get(path, &p); code != http.StatusOK {
				return fmt.Sprintf("GET %s: %d", path, code)
			}
			if p.Board != k.Board || p.Period != k.Period || p.Scope != k.Scope || p.Total != int64(len(want)) ||
				(p.PeriodEnd == nil) != (k.Period == "total") {
				return fmt.Sprintf("GET %s: board %s period %s scope %s end %v total %d, want total %d", path, p.Board, p.Period, p.Scope, p.PeriodEnd, p.Total, len(want))
			}
			if n := min(100, len(want)-offset); len(p.Items) != n {
				return fmt.Sprintf("GET %s: %d items, want %d", path, len(p.Items), n)
			}
			for i, e := range p.Items {
				if r := want[offset+i]; !same(e, offset+i+1, r) {
					return fmt.Sprintf("GET %s: item %d is %+v, want %+v at rank %d", path, i, e, r, offset+i+1)
				}
			}
		}
	}
	return ""
}

// standings reads every member's standing (2 neighbours) on every board it is on.
func (c *checker) standings(truth e2e.ScoreTruth) string {
	const n = 2
	for k, want := range truth {
		for i, r := range want {
			path := fmt.Sprintf("/v1/boards/%s/members/%s?%s&neighbors=%d", k.Board, r.Member, query(k), n)
			var st api.BoardStanding
			if code := c.get(path, &st); code != http.StatusOK {
				return fmt.Sprintf("GET %s: %d", path, code)
			}
			if !same(st.Member, i+1, r) || st.Total != int64(len(want)) || len(st.Above) != min(n, i) || len(st.Below) != min(n, len(want)-i-1) {
				return fmt.Sprintf("GET %s: %+v, want %+v at rank %d of %d", path, st, r, i+1, len(want))
			}
			for j, e := range st.Above {
				if rank := i - len(st.Above) + j; !same(e, rank+1, want[rank]) {
					return fmt.Sprintf("GET %s: above %d is %+v, want %+v", path, j, e, want[rank])
				}
			}
			for j, e := range st.Below {
				if rank := i + 1 + j; !same(e, rank+1, want[rank]) {
					return fmt.Sprintf("GET %s: below %d is %+v, want %+v", path, j, e, want[rank])
				}
			}
		}
	}
	return ""
}
