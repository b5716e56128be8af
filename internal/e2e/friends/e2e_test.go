package friendse2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/friends"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// Shape of the generated graph: 60 users, 400 pairs touched, 2,000 ops before duplicates.
const (
	users = 60
	pairs = 400
	ops   = 2_000
)

// graph is a generated stream of friendship ops and its truth.
type graph struct {
	records []*kgo.Record
	truth   map[string][]string // user -> friends, sorted
	steps   map[string][2]int64 // user -> steps and reach time today (users without: absent)
}

// generate makes ops on random pairs, from either side, at random ts within the last ten
// hours (many on the same ts, so the tie rule decides), produced in a shuffled order (a
// pair's ops arrive out of ts order, on either side), with a tenth of them twice. The truth
// is each pair's deciding op by the contract: the latest ts, a removal winning a tie.
func generate(rng *rand.Rand, now time.Time) graph {
	uid := func(i int) string { return fmt.Sprintf("user-%02d", i) }
	type pair struct{ a, b int }
	var ps []pair
	seen := map[pair]bool{}
	for len(ps) < pairs {
		a, b := rng.IntN(users), rng.IntN(users)
		if a == b {
			continue
		}
		p := pair{min(a, b), max(a, b)}
		if !seen[p] {
			seen[p] = true
			ps = append(ps, p)
		}
	}
	type decided struct {
		ts  int64
		add bool
	}
	win := map[pair]decided{}
	g := graph{truth: map[string][]string{}, steps: map[string][2]int64{}}
	for range ops {
		p := ps[rng.IntN(len(ps))]
		ts := now.Add(-time.Duration(rng.IntN(600)) * time.Minute).UnixMilli() // 600 distinct ts: ties
		add := rng.IntN(3) != 0
		from, to := p.a, p.b
		if rng.IntN(2) == 0 {
			from, to = to, from
		}
		if d, ok := win[p]; !ok || ts > d.ts || ts == d.ts && !add && d.add {
			win[p] = decided{ts, add}
		}
		op := topics.OpRemove
		if add {
			op = topics.OpAdd
		}
		v, _ := json.Marshal(topics.FriendOp{UserID: uid(from), FriendID: uid(to), Op: op, TS: topics.Timestamp{Time: time.UnixMilli(ts)}})
		copies := 1
		if rng.IntN(10) == 0 {
			copies = 2 // a duplicate, somewhere else in the stream
		}
		for range copies {
			g.records = append(g.records, &kgo.Record{Key: []byte(uid(from)), Value: v, Timestamp: now})
		}
	}
	rng.Shuffle(len(g.records), func(i, j int) { g.records[i], g.records[j] = g.records[j], g.records[i] })
	for p, d := range win {
		if d.add {
			g.truth[uid(p.a)] = append(g.truth[uid(p.a)], uid(p.b))
			g.truth[uid(p.b)] = append(g.truth[uid(p.b)], uid(p.a))
		}
	}
	for u := range g.truth {
		slices.Sort(g.truth[u])
	}
	// Steps today for two thirds of the users, with ties of value and of reach time.
	day := board.DayOf(now, time.UTC)
	for i := range users {
		if i%3 != 2 {
			g.steps[uid(i)] = [2]int64{int64(1000 * (i % 7)), day.FirstInstant().Add(20*time.Hour).UnixMilli() + int64(i%4)}
		}
	}
	return g
}

// run is one end-to-end run (e2e.Run) of friends boards, with the HTTP API on its database.
type run struct {
	*e2e.Run
	base string
}

func newRun(t *testing.T, brokers []string) *run {
	t.Helper()
	r := &run{Run: e2e.NewRun(t, brokers, "friends")}
	r.base = r.API()
	return r
}

func (r *run) produce(recs []*kgo.Record) {
	r.T.Helper()
	r.Produce(r.Topic(topics.FriendsChanged), recs...)
}

// seedSteps writes the day's steps board as the steps sink does.
func (r *run) seedSteps(g graph, day board.Day) {
	r.T.Helper()
	c := board.DayComposite(day)
	var zs []goredis.Z
	for u, v := range g.steps {
		score, err := c.Encode(v[0], v[1])
		if err != nil {
			r.T.Fatal(err)
		}
		zs = append(zs, goredis.Z{Score: score, Member: u})
	}
	if err := r.Redis.ZAdd(context.Background(), rsredis.StepsGlobalBoard(day), zs...).Err(); err != nil {
		r.T.Fatal(err)
	}
}

// tables reads the friends table's changelog: every user's friends as the group keeps them.
func (r *run) tables() map[string][]string {
	r.T.Helper()
	got := map[string][]string{}
	r.Records(string(r.Kafka.Names.Table(friends.Group)), func(rec *kgo.Record) error {
		var s friends.State
		if err := s.UnmarshalBinary(rec.Value); err != nil {
			return err
		}
		got[string(rec.Key)] = s.Friends()
		return nil
	})
	return got
}

// problem says how the first user whose friend set (in the table or Redis) or friends board
// differs from the truth does ("" when none does).
func (r *run) problem(g graph, day board.Day) string {
	ctx := context.Background()
	table := r.tables()
	for i := range users {
		u := fmt.Sprintf("user-%02d", i)
		want := g.truth[u]
		if got := table[u]; !slices.Equal(got, want) {
			return fmt.Sprintf("table: friends of %s = %v, want %v", u, got, want)
		}
		got, err := r.Redis.SMembers(ctx, rsredis.FriendsKey(u)).Result()
		if err != nil {
			r.T.Fatal(err)
		}
		if slices.Sort(got); !slices.Equal(got, want) {
			return fmt.Sprintf("redis: friends of %s = %v, want %v", u, got, want)
		}
		if p := r.board(g, u, day); p != "" {
			return p
		}
	}
	return ""
}

// board compares the user's friends board (limit 100: everyone) with the truth.
func (r *run) board(g graph, u string, day board.Day) string {
	type row struct {
		member         string
		score, reached int64
		present        bool
	}
	var want []row
	for _, m := range append([]string{u}, g.truth[u]...) {
		v, ok := g.steps[m]
		want = append(want, row{m, v[0], v[1], ok})
	}
	slices.SortFunc(want, func(a, b row) int {
		switch {
		case a.present != b.present:
			if a.present {
				return -1
			}
			return 1
		case a.present && a.score != b.score:
			return int(b.score - a.score)
		case a.present && a.reached != b.reached:
			return int(a.reached - b.reached)
		}
		return strings.Compare(a.member, b.member)
	})
	path := fmt.Sprintf("%s/v1/friends/%s/steps?day=%s&limit=100", r.base, u, day)
	resp, err := http.Get(path)
	if err != nil {
		r.T.Fatal(err)
	}
	defer resp.Body.Close()
	var fb api.FriendsBoard
	if err := json.NewDecoder(resp.Body).Decode(&fb); err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	if fb.Total != len(want) || len(fb.Items) != len(want) {
		return fmt.Sprintf("GET %s: total %d, %d items, want %d", path, fb.Total, len(fb.Items), len(want))
	}
	for i, e := range fb.Items {
		w := want[i]
		if e.Rank != int64(i+1) || e.Member != w.member || e.Score != w.score || (e.ReachedAt != nil) != w.present ||
			w.present && e.ReachedAt.UnixMilli() != w.reached {
			return fmt.Sprintf("GET %s: item %d = %+v, want %+v", path, i, e, w)
		}
		if e.Member == u && (fb.Me.Rank != e.Rank || fb.Me.Member != u || fb.Me.Score != e.Score || (fb.Me.ReachedAt != nil) != w.present) {
			return fmt.Sprintf("GET %s: me = %+v, want %+v", path, fb.Me, e)
		}
	}
	return ""
}

func (r *run) waitExact(g graph, day board.Day, timeout time.Duration) {
	r.T.Helper()
	last := ""
	deadline := time.Now().Add(timeout)
	for {
		if last = r.problem(g, day); last == "" {
			break
		}
		for _, p := range r.Processes {
			if err := p.Exited(); err != nil {
				r.T.Fatalf("%s exited: %v\n%s", p.Name, err, p.Output())
			}
		}
		if time.Now().After(deadline) {
			r.T.Fatalf("after %s: %s", timeout, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
	n := 0
	for _, fs := range g.truth {
		n += len(fs)
	}
	r.T.Logf("exact: %d users, %d friendships, %d records", users, n/2, len(g.records))
}

// TestFriendsEndToEnd: `rankstream process` on the generated graph: every user's friend set
// in the group table and in Redis, and every user's friends board through the HTTP API, equal
// the truth; no valid op is dead-lettered. Then, with Redis emptied, `rankstream replay
// --group friends --to-start` and a new process write every friend set again, exactly.
func TestFriendsEndToEnd(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		now := time.Now()
		r := newRun(t, brokers)
		g := generate(rand.New(rand.NewPCG(21, 1)), now)
		day := board.DayOf(now, time.UTC)
		r.seedSteps(g, day)
		first := r.Start("process")
		r.produce(g.records)
		r.waitExact(g, day, 2*time.Minute)
		if n := r.DeadLetters(); n != 0 {
			t.Fatalf("%d dead letters", n)
		}

		first.Signal(syscall.SIGTERM)
		if err := first.Wait(); err != nil {
			t.Fatalf("process did not stop cleanly: %v\n%s", err, first.Output())
		}
		r.Processes = nil
		if err := r.Redis.FlushDB(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		r.seedSteps(g, day)
		replay := testenv.StartProcess(t, "replay", r.Bin, append([]string{"replay", "--group", "friends", "--to-start"}, r.KafkaFlags()...)...)
		if err := replay.Wait(); err != nil || !strings.Contains(replay.Output(), fmt.Sprintf("records to reprocess: %d", len(g.records))) {
			t.Fatalf("replay: %v\n%s", err, replay.Output())
		}
		r.Start("replayed")
		r.waitExact(g, day, 2*time.Minute)
	})
}

// TestFriendsAfterKill: two instances share the partitions (an op and its other side's
// record often land on different instances); one is killed with SIGKILL mid-stream (tables
// written, loop records sent, Redis writes and commits pending) and started again while the
// rest arrives: tables, Redis and boards end equal to the truth.
func TestFriendsAfterKill(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		now := time.Now()
		r := newRun(t, brokers)
		g := generate(rand.New(rand.NewPCG(22, 1)), now)
		day := board.DayOf(now, time.UTC)
		r.seedSteps(g, day)
		a := r.Start("process-a")
		r.Start("process-b")
		half := len(g.records) / 2
		r.produce(g.records[:half])
		testenv.WaitFor(t, 2*time.Minute, "some friend sets in Redis before the kill", func() bool {
			n, err := r.Redis.Exists(context.Background(), rsredis.FriendsKey("user-00"), rsredis.FriendsKey("user-01"), rsredis.FriendsKey("user-02")).Result()
			return err == nil && n > 0
		})
		a.Signal(syscall.SIGKILL)
		_ = a.Wait()
		r.Processes = r.Processes[1:]
		r.produce(g.records[half:])
		r.Start("process-a-again")
		r.waitExact(g, day, 3*time.Minute)
	})
}
