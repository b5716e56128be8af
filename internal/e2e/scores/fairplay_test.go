package scorese2e

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lovoo/goka"
	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// The boards of the fair-play test: fp with every limit, open with none.
const fairPlayBoards = `boards:
  - name: fp
    periods: [h, d, total]
    tz: UTC
    retention: 30d
    shards: 2
    max_incr: 50
    max_rate: {ops: 5, points: 200}
  - name: open
    periods: [d, total]
    tz: UTC
    retention: 30d
`

// fairPlayStream builds the ops of the test and the truth, by the test's own rules.
type fairPlayStream struct {
	records     []e2e.Record
	sums        map[e2e.ScoreKey]map[string]*e2e.ScoreRow // board period → member → row
	quarantined int
	banned      int // ops of the banned member after the ban: dead-lettered
}

func newFairPlayStream() *fairPlayStream {
	return &fairPlayStream{sums: map[e2e.ScoreKey]map[string]*e2e.ScoreRow{}}
}

// op adds an incr of member on board at ts; applied tells whether the truth takes it.
func (s *fairPlayStream) op(req, board, member string, score int64, ts time.Time, applied bool) {
	value := fmt.Sprintf(`{"request_id":%q,"board":%q,"member":%q,"op":"incr","score":%d,"ts":%q}`,
		req, board, member, score, ts.Format(time.RFC3339Nano))
	s.records = append(s.records, e2e.Record{Key: member, Value: []byte(value), Time: ts.Add(time.Second)})
	periods := []string{"d:" + ts.Format("20060102"), "total"}
	if board == "fp" {
		periods = append(periods, "h:"+ts.Format("2006010215"))
	}
	for _, p := range periods {
		k := e2e.ScoreKey{Board: board, Period: p, Scope: "global"}
		if s.sums[k] == nil {
			s.sums[k] = map[string]*e2e.ScoreRow{}
		}
		if !applied {
			continue
		}
		r := s.sums[k][member]
		if r == nil {
			r = &e2e.ScoreRow{Member: member}
			s.sums[k][member] = r
		}
		r.Score += score
		r.Reached = ts.UnixMilli()
	}
}

// truth ranks the sums; the banned member is on no board.
func (s *fairPlayStream) truth(banned string) e2e.ScoreTruth {
	t := e2e.ScoreTruth{}
	for k, rows := range s.sums {
		t[k] = []e2e.ScoreRow{}
		for m, r := range rows {
			if m != banned {
				t[k] = append(t[k], *r)
			}
		}
		slices.SortFunc(t[k], func(a, b e2e.ScoreRow) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Reached, b.Reached), strings.Compare(a.Member, b.Member))
		})
	}
	return t
}

// TestFairPlayEndToEnd: `rankstream process` on boards with fair play. Twenty honest members
// (incrs up to max_incr, at most one op a minute), a member with one spike above max_incr, one
// with a sixth op in a minute and one with more than max_rate's points in a minute: every
// quarantined op is in scores.quarantine, the cheaters' entries stay where they were before it
// (frozen: their later ops are quarantined too) and the honest members' boards equal the truth.
// Then `rankstream ban --all` removes a member from every period of both boards at once and
// their later ops go to the dead-letter topic; `rankstream ban --release` lets the spiking member
// go on; both stick across a kill -9 (the later ops are dead-lettered, applied). Last, with the processor stopped, Redis flushed and `rankstream replay --group scores
// --to-start`, the restarted processor rebuilds the same boards: the ban sticks.
func TestFairPlayEndToEnd(t *testing.T) {
	file := filepath.Join(t.TempDir(), "boards.yaml")
	if err := os.WriteFile(file, []byte(fairPlayBoards), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		rng := rand.New(rand.NewPCG(5, 14))
		base := lastMonday(time.Now()) // 00:00 UTC: the ops span 00:00-02:10, a past hour boundary
		s := newFairPlayStream()
		members := []string{"banned", "points", "rate", "spike"}
		for i := range 20 {
			members = append(members, fmt.Sprintf("honest%02d", i))
		}
		for _, m := range members {
			frozen := false
			for i := range 40 {
				ts := base.Add(time.Duration(i)*3*time.Minute + time.Duration(rng.IntN(60_000))*time.Millisecond)
				req := fmt.Sprintf("%s-%d", m, i)
				s.op(req+"-open", "open", m, 1+rng.Int64N(1000), ts, true) // no limits: anything goes
				switch {
				case m == "spike" && i == 20:
					s.op(req, "fp", m, 51, ts, false)
					s.quarantined++
					frozen = true
				case m == "rate" && i == 20: // six ops in one minute: the sixth is one too many
					for j := range 6 {
						s.op(fmt.Sprintf("%s-%d", req, j), "fp", m, 1, ts.Truncate(time.Minute).Add(time.Duration(j)*time.Second), j < 5)
					}
					s.quarantined++
					frozen = true
				case m == "points" && i == 20: // 50+50+50+50 points in a minute, then 1 more
					for j := range 5 {
						s.op(fmt.Sprintf("%s-%d", req, j), "fp", m, max(50-49*int64(j/4), 1), ts.Truncate(time.Minute).Add(time.Duration(j)*time.Second), j < 4)
					}
					s.quarantined++
					frozen = true
				default:
					s.op(req, "fp", m, 1+rng.Int64N(50), ts, !frozen)
					if frozen {
						s.quarantined++
					}
				}
			}
		}
		r := newRun(t, brokers, file)
		p := r.start("process")
		produce(t, r.Kafka, s.records)
		r.waitExact(s.truth(""), 2*time.Minute)
		r.waitCount(topics.ScoresQuarantine, int64(s.quarantined))

		// The ban of every board and the release of the spiking member; then a crash (the
		// table comes back from its changelog), and their later ops.
		r.command("ban", "--all", "--member", "banned", "--reason", "e2e: a test ban", "--by", "tester")
		r.command("ban", "--board", "fp", "--member", "spike", "--release", "--by", "tester")
		r.waitExact(s.truth("banned"), time.Minute)
		r.waitCount(topics.ScoresQuarantine, int64(s.quarantined+2)) // and the audit of ban and release
		p.Signal(syscall.SIGKILL)
		_ = p.Wait()
		r.Processes = nil
		p = r.start("process-after-kill")
		before := len(s.records)
		later := base.Add(2*time.Hour + 30*time.Minute)
		for i := range 5 {
			s.op(fmt.Sprintf("banned-later-%d", i), "fp", "banned", 10, later.Add(time.Duration(i)*time.Minute), false)
			s.op(fmt.Sprintf("spike-later-%d", i), "fp", "spike", 10, later.Add(time.Duration(i)*time.Minute), true)
		}
		s.banned = 5
		produce(t, r.Kafka, s.records[before:])
		truth := s.truth("banned")
		r.waitExact(truth, time.Minute)
		r.waitCount(topics.DLQ, int64(s.banned))
		r.waitCount(topics.ScoresQuarantine, int64(s.quarantined+2))

		// A replay from offset 0 into an empty Redis.
		p.Signal(syscall.SIGTERM)
		if err := p.Wait(); err != nil {
			t.Fatalf("process: %v\n%s", err, p.Output())
		}
		r.Processes = nil
		opt, err := goredis.ParseURL(r.RedisURL())
		if err != nil {
			t.Fatal(err)
		}
		rdb := goredis.NewClient(opt)
		defer rdb.Close()
		if err := rdb.FlushDB(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		r.command("replay", "--group", "scores", "--to-start")
		r.start("replayed")
		r.waitExact(truth, 2*time.Minute)
		t.Logf("%d ops, %d quarantined, %d dead-lettered as banned; the same boards after the replay", len(s.records), s.quarantined, s.banned)
	})
}

// command runs `rankstream args...` on this run's topics and waits for it to succeed.
func (r *scoresRun) command(args ...string) {
	r.T.Helper()
	p := testenv.StartProcess(r.T, args[0], r.Bin, append(args, r.KafkaFlags()...)...)
	if err := p.Wait(); err != nil {
		r.T.Fatalf("rankstream %s: %v\n%s", strings.Join(args, " "), err, p.Output())
	}
}

// waitCount waits until topic holds want records, and fails if it holds more.
func (r *scoresRun) waitCount(topic goka.Stream, want int64) {
	r.T.Helper()
	testenv.WaitFor(r.T, 30*time.Second, fmt.Sprintf("%d records in %s", want, topic), func() bool {
		n := r.Count(string(r.Kafka.Names.Stream(topic)))
		if n > want {
			r.T.Fatalf("%d records in %s, want %d", n, topic, want)
		}
		return n == want
	})
}
