package hote2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/hot"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	"github.com/rankstream/rankstream/sketch/exact"
	"github.com/rankstream/rankstream/topics"
)

type query struct {
	term string
	ms   int64
}

// generate makes n queries over span of event time from start: a Zipf-like vocabulary plus
// two planted terms that rise and fall, in time order. Terms are already normalised (the test
// sends them with random case and spaces, which the pipeline must undo).
func generate(n int, start time.Time, span time.Duration) []query {
	rng := rand.New(rand.NewPCG(7, 7))
	out := make([]query, n)
	for i := range out {
		ms := start.UnixMilli() + int64(i)*span.Milliseconds()/int64(n)
		frac := float64(i) / float64(n)
		var term string
		switch p := rng.Float64(); {
		case p < 0.15*max(0, 1-abs(frac-0.3)/0.2):
			term = "black friday"
		case p < 0.15*max(0, 1-abs(frac-0.7)/0.2)+0.001:
			term = "snow storm"
		default:
			// rank k with probability ~ 1/k over 500 terms
			k := int(500*rng.Float64()*rng.Float64()) + 1
			term = fmt.Sprintf("term %d", k)
		}
		out[i] = query{term: term, ms: ms}
	}
	return out
}

func abs(x float64) float64 { return max(x, -x) }

// searchQuery is a search query's value as producers write it. A struct, not a map:
// json.Marshal sorts a map's keys through reflection, a cost the 300k-query runs paid for
// every query under -race.
func searchQuery(query string, ms int64, user string) []byte {
	v, err := json.Marshal(struct {
		Query  string `json:"query"`
		TS     int64  `json:"ts"`
		UserID string `json:"user_id"`
	}{query, ms, user})
	if err != nil {
		panic(err)
	}
	return v
}

func spell(rng *rand.Rand, term string) string {
	if rng.IntN(4) == 0 {
		return "  " + strings.ToUpper(term[:1]) + term[1:] + " "
	}
	return term
}

type row struct {
	WindowEnd time.Time `ch:"window_end"`
	Rank      uint32    `ch:"rank"`
	Item      string    `ch:"item"`
	Count     uint64    `ch:"count"`
	Error     uint64    `ch:"error"`
	Missing   int64     `ch:"missing"` // partitions the snapshot missed
}

// run is one pipeline run's stores: a ClickHouse database and a Redis database of its own.
type run struct {
	ch      driver.Conn
	chDB    string
	redis   string
	redisDB int
}

func newRun(t *testing.T) run {
	h := e2e.NewHistory(t)
	addr, db := testenv.RedisAddr(t)
	return run{ch: h.Conn, chDB: h.Database, redis: addr, redisDB: db}
}

// args returns `rankstream process` arguments writing to the run's stores, with the default
// window, slide, lateness, lookahead and idle time (the later of two equal flags wins: extra
// may set --partitions and --http). --hot-k 20 keeps the ClickHouse rows this test compares
// window by window at a fifth (checkExact needs the top 10, which 20 items cover); the default
// K of 100 runs in TestHotSearchBacklog and the dev test.
func (r run) args(brokers []string, prefix string, extra ...string) []string {
	return append([]string{"process",
		"--brokers", strings.Join(brokers, ","), "--redis", fmt.Sprintf("redis://%s/%d", r.redis, r.redisDB),
		"--topic-prefix", prefix, "--partitions", "8", "--http", "127.0.0.1:0",
		"--history", "--clickhouse", os.Getenv(testenv.EnvClickHouse), "--clickhouse-database", r.chDB, "--hot-k", "20"}, extra...)
}

func (r run) rows(t *testing.T, ctx context.Context) []row {
	var rows []row
	if err := r.ch.Select(ctx, &rows, "SELECT window_end, rank, item, count, error, "+rsclickhouse.TopKMissingSQL+
		" AS missing FROM "+r.chDB+".topk_history FINAL WHERE stream = 'search' ORDER BY window_end, rank"); err != nil {
		t.Fatal(err)
	}
	return rows
}

// windows is what the history holds, in brief: how many windows, the first's and the last's
// end. The waits poll it instead of rows, which reads and scans every row (20k in
// TestHotSearch, ten times a second: under -race that took a core of the test process).
type windows struct {
	N     uint64    `ch:"n"`
	First time.Time `ch:"first"`
	Last  time.Time `ch:"last"`
}

func (r run) windows(t *testing.T, ctx context.Context) windows {
	var w []windows
	if err := r.ch.Select(ctx, &w, "SELECT count(DISTINCT window_end) AS n, min(window_end) AS first, max(window_end) AS last FROM "+
		r.chDB+".topk_history WHERE stream = 'search'"); err != nil || len(w) != 1 {
		t.Fatalf("topk_history's windows: %v (%d rows)", err, len(w))
	}
	return w[0]
}

// waitAll waits until ClickHouse holds every window up to lastEnd, one slide apart, and
// returns their rows.
func (r run) waitAll(t *testing.T, ctx context.Context, lastEnd time.Time, procs ...*testenv.Process) []row {
	testenv.WaitFor(t, 5*time.Minute, "every window up to "+lastEnd.String()+" in ClickHouse", func() bool {
		for _, p := range procs {
			if err := p.Exited(); err != nil {
				t.Fatalf("%s exited: %v\n%s", p.Name, err, p.Output())
			}
		}
		w := r.windows(t, ctx)
		return w.N > 0 && contiguous(int(w.N), w.First, w.Last) && !w.Last.Before(lastEnd)
	})
	return r.rows(t, ctx)
}

func (r run) latest(t *testing.T, ctx context.Context) topics.TopKSnapshot {
	rdb := goredis.NewClient(&goredis.Options{Addr: r.redis, DB: r.redisDB})
	defer rdb.Close()
	var s topics.TopKSnapshot
	raw, err := rdb.Get(ctx, "hot:search:latest").Bytes()
	if err == nil {
		err = json.Unmarshal(raw, &s)
	}
	if err != nil {
		t.Fatalf("hot:search:latest: %v %s", err, raw)
	}
	s.GeneratedAt = time.Time{}
	return s
}

// The window and slide the tests check against: the defaults.
var (
	e2eWindow = hot.DefaultConfig().Window
	e2eSlide  = hot.DefaultConfig().Slide
)

// TestHotSearch: 300k queries over 90 minutes of event time, with two planted terms that rise and
// fall, go through `rankstream process` (hot group, merge group, default window, slide,
// lateness, lookahead and idle time) on the real broker and kfake.
//   - Every snapshot in ClickHouse holds the exact top 10 of its one-hour window (ties at rank
//     10 aside), every item's true count lies within its bound, the latest snapshot is in
//     Redis, and invalid queries are dead-lettered.
//   - Replay: a replay from offset 0 (`rankstream replay --group hot --to-start`) publishes
//     the same snapshots again: the same rows under FINAL, none extra, the same latest
//     snapshot in Redis.
//   - Crash: a process killed with SIGKILL mid-stream and started again publishes the same
//     snapshots as the uninterrupted run (stores of its own).
//   - Two instances sharing the 8 partitions publish the same snapshots as one.
func TestHotSearch(t *testing.T) {
	t.Parallel()
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		prefix := testenv.UniqueName(t, "hot") + "."
		kc := kafka.Config{Brokers: brokers, Partitions: 8, Names: topics.Names{Prefix: prefix}}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		e2e.KafkaClient(t, kc) // creates the topics
		start := time.Now().Add(-3 * time.Hour).Truncate(time.Minute)
		queries := generate(300_000, start, 90*time.Minute)
		cl, err := kc.KgoClient(kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(1<<20))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		rng := rand.New(rand.NewPCG(1, 2))
		topic := string(kc.Names.Stream(topics.SearchQueries))
		newest := map[int32]int64{}
		for i, q := range queries {
			user := fmt.Sprint("u", i%997)
			v := searchQuery(spell(rng, q.term), q.ms, user)
			cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(user), Value: v}, nil)
			p := kafka.PartitionOf(user, 8)
			newest[p] = max(newest[p], q.ms)
		}
		for _, bad := range []string{`{"query":"   ","ts":1}`, `{"query":"x"}`, `not json`, `{"query":"` + strings.Repeat("a", 300) + `","ts":1}`} {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte("bad"), Value: []byte(bad)}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		// Windows close up to the slowest input partition's newest event less the lateness.
		slowest := slices.Min(slices.Collect(maps.Values(newest)))
		lastEnd := time.UnixMilli((slowest - 2000) / e2eSlide.Milliseconds() * e2eSlide.Milliseconds())

		first := newRun(t)
		began := time.Now()
		proc := testenv.StartProcess(t, "processor", testenv.Rankstream(t), first.args(brokers, prefix, "--log-level", "warn")...)
		rows := first.waitAll(t, ctx, lastEnd, proc)
		t.Logf("uninterrupted run: %d queries, %d rows in %s", len(queries), len(rows), time.Since(began).Round(time.Second))
		checkExact(t, rows, queries, 1000)
		latest := first.latest(t, ctx)
		if latest.WindowEnd.Before(lastEnd) || len(latest.Items) == 0 {
			t.Fatalf("hot:search:latest is %+v, want the window ending %s", latest, lastEnd)
		}
		var dead int64
		for _, end := range endOffsets(t, ctx, cl, string(kc.Names.Stream(topics.DLQ))) {
			dead += end
		}
		if dead != 4 {
			t.Fatalf("%d dead letters, want 4", dead)
		}
		waitInputCommitted(t, ctx, cl, kc)
		stop(t, proc)

		t.Run("replay", func(t *testing.T) {
			replay(t, brokers, prefix)
			restart := time.Now().UnixMilli()
			proc := testenv.StartProcess(t, "replay", testenv.Rankstream(t), first.args(brokers, prefix, "--log-level", "warn")...)
			testenv.WaitFor(t, 5*time.Minute, "every snapshot published again", func() bool {
				var v []struct {
					V uint64 `ch:"v"`
				}
				err := first.ch.Select(ctx, &v, "SELECT min(v) AS v FROM (SELECT window_end, max("+rsclickhouse.TopKGeneratedAtSQL+
					") AS v FROM "+first.chDB+".topk_history GROUP BY window_end)")
				return err == nil && len(v) == 1 && v[0].V >= uint64(restart)
			})
			sameSnapshots(t, rows, first.rows(t, ctx), queries)
			sameLatest(t, latest, first.latest(t, ctx), queries)
			waitInputCommitted(t, ctx, cl, kc)
			stop(t, proc)
		})

		t.Run("kill -9", func(t *testing.T) {
			replay(t, brokers, prefix)
			crash := newRun(t)
			// A checkpoint every second, so that the kill lands after several: the restart is
			// then checkpoint plus loop records, the path under test. The other runs use the
			// default (5 s).
			args := crash.args(brokers, prefix, "--log-level", "info", "--hot-checkpoint", "1s")
			checkpoints := string(kc.Names.Stream(topics.HotCheckpoints))
			cleared := endOffsets(t, ctx, cl, checkpoints) // after the replay's tombstones
			proc := testenv.StartProcess(t, "doomed", testenv.Rankstream(t), args...)
			third := rows[len(rows)/3].WindowEnd
			// Both conditions: rows alone can come early (the history group may write again a
			// batch of the previous run it had not committed), and a kill before a partition's
			// first checkpoint tests the restart without one, not this path.
			testenv.WaitFor(t, 5*time.Minute, "a third of the windows published and a checkpoint of every partition stored", func() bool {
				if w := crash.windows(t, ctx); w.N == 0 || w.Last.Before(third) {
					return false
				}
				for part, end := range endOffsets(t, ctx, cl, checkpoints) {
					if end <= cleared[part] {
						return false
					}
				}
				return true
			})
			proc.Signal(syscall.SIGKILL)
			_ = proc.Wait()
			// On a loaded machine the partitions progress unevenly: the last first checkpoint
			// can come after the last window. And on an idle one the process can have counted
			// and committed everything (input and loop records) before the history in
			// ClickHouse shows a third of the windows: a partition's state is restored when a
			// record of it comes, and none comes. Either way the restart has nothing to
			// restore, and only the exactness below is tested.
			w := crash.windows(t, ctx)
			finished := w.N > 0 && !w.Last.Before(lastEnd)
			counted := allCommitted(t, ctx, cl, kc)
			restarted := testenv.StartProcess(t, "restarted", testenv.Rankstream(t), args...)
			sameSnapshots(t, rows, crash.waitAll(t, ctx, lastEnd, restarted), queries)
			switch {
			case finished:
				t.Logf("the killed process had published every window: the restart restored nothing")
			case counted:
				t.Logf("the killed process had committed its whole input and loop topic: the restart restored nothing")
			case !strings.Contains(restarted.Output(), "hot: restored from checkpoint"):
				t.Fatalf("the restarted process restored no checkpoint:\n%s", restarted.Output())
			}
			sameLatest(t, latest, crash.latest(t, ctx), queries)
			waitInputCommitted(t, ctx, cl, kc)
			stop(t, restarted)
		})

		t.Run("two instances", func(t *testing.T) {
			replay(t, brokers, prefix)
			two := newRun(t)
			a := testenv.StartProcess(t, "instance-a", testenv.Rankstream(t), two.args(brokers, prefix, "--log-level", "warn")...)
			b := testenv.StartProcess(t, "instance-b", testenv.Rankstream(t), two.args(brokers, prefix, "--log-level", "warn")...)
			sameSnapshots(t, rows, two.waitAll(t, ctx, lastEnd, a, b), queries)
			sameLatest(t, latest, two.latest(t, ctx), queries)
			waitInputCommitted(t, ctx, cl, kc)
			stop(t, a)
			stop(t, b)
		})
	})
}

// waitInputCommitted waits until the hot group's committed offsets cover every record of the
// input (its end offsets), as they must once the process read it all: a query the group
// counted but did not commit would be read again after the next stop.
func waitInputCommitted(t *testing.T, ctx context.Context, cl *kgo.Client, kc kafka.Config) {
	t.Helper()
	topic := string(kc.Names.Stream(topics.SearchQueries))
	var all int64
	for _, end := range endOffsets(t, ctx, cl, topic) {
		all += end
	}
	adm, group := kadm.NewClient(cl), string(kc.Names.Group(hot.Group))
	began, at := time.Now(), testenv.Committed(adm, group, topic)
	testenv.WaitCommitted(t, adm, group, topic, all, 2*time.Minute)
	t.Logf("%d of %d queries committed when the last window was published; all %s later", at, all, time.Since(began).Round(time.Millisecond))
}

// allCommitted says whether the hot group's committed offsets cover every record of its
// input and of its loop topic.
func allCommitted(t *testing.T, ctx context.Context, cl *kgo.Client, kc kafka.Config) bool {
	t.Helper()
	adm, group := kadm.NewClient(cl), string(kc.Names.Group(hot.Group))
	for _, topic := range []string{string(kc.Names.Stream(topics.SearchQueries)), string(kc.Names.Loop(hot.Group))} {
		var all int64
		for _, end := range endOffsets(t, ctx, cl, topic) {
			all += end
		}
		if testenv.Committed(adm, group, topic) < all {
			return false
		}
	}
	return true
}

// replay runs `rankstream replay --group hot --to-start` (the processors stopped).
func replay(t *testing.T, brokers []string, prefix string) {
	t.Helper()
	p := testenv.StartProcess(t, "replay-command", testenv.Rankstream(t), "replay", "--group", "hot", "--to-start",
		"--brokers", strings.Join(brokers, ","), "--topic-prefix", prefix, "--log-level", "warn")
	if err := p.Wait(); err != nil {
		t.Fatalf("rankstream replay: %v\n%s", err, p.Output())
	}
	out := p.Output()
	if !strings.Contains(out, "cleared "+prefix+string(topics.HotCheckpoints)) {
		t.Fatalf("rankstream replay did not clear the checkpoints:\n%s", out)
	}
	// The loop and the partials hold nothing of the previous run: every window after the replay
	// is computed again from the queries, and each replay leaves one copy of the loop.
	for _, topic := range []string{string(topics.Names{Prefix: prefix}.Loop(hot.Group)), prefix + string(topics.HotPartials)} {
		if !strings.Contains(out, "purged "+topic) {
			t.Fatalf("rankstream replay did not purge %s:\n%s", topic, out)
		}
	}
}

// endOffsets returns the end offset of every partition of topic.
func endOffsets(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) map[int32]int64 {
	t.Helper()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	m := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { m[o.Partition] = o.Offset })
	return m
}

func stop(t *testing.T, p *testenv.Process) {
	t.Helper()
	p.Signal(syscall.SIGTERM)
	if err := p.Wait(); err != nil {
		t.Fatalf("%s did not stop cleanly: %v\n%s", p.Name, err, p.Output())
	}
}

// checkExact compares every snapshot with exact counts of its window, computed by sliding
// over the queries (in time order), and wants at least least snapshots.
func checkExact(t *testing.T, rows []row, queries []query, least int) {
	t.Helper()
	byEnd := map[int64][]row{}
	for _, r := range rows {
		byEnd[r.WindowEnd.UnixMilli()] = append(byEnd[r.WindowEnd.UnixMilli()], r)
	}
	counter, err := exact.New(e2eWindow, e2eSlide)
	if err != nil {
		t.Fatal(err)
	}
	next := 0
	for _, endMs := range slices.Sorted(maps.Keys(byEnd)) {
		counter.Advance(time.UnixMilli(endMs))
		for ; next < len(queries) && queries[next].ms < endMs; next++ {
			counter.Add(queries[next].term, time.UnixMilli(queries[next].ms))
		}
		top10 := counter.Top(10)
		if len(top10) == 0 {
			t.Fatalf("a snapshot for the window ending %s, which holds no query", time.UnixMilli(endMs))
		}
		tenth := top10[len(top10)-1].Count
		top := map[string]bool{}
		for _, r := range byEnd[endMs] {
			if r.Missing != 0 {
				t.Fatalf("window ending %s: published without %d partitions", time.UnixMilli(endMs), r.Missing)
			}
			truth := counter.Count(r.Item)
			if truth > r.Count || truth < r.Count-r.Error {
				t.Fatalf("window ending %s: %q true count %d outside [%d, %d]", time.UnixMilli(endMs), r.Item, truth, r.Count-r.Error, r.Count)
			}
			if r.Rank <= 10 {
				if truth < tenth {
					t.Fatalf("window ending %s: %q at rank %d has %d, below the exact 10th count %d", time.UnixMilli(endMs), r.Item, r.Rank, truth, tenth)
				}
				top[r.Item] = true
			}
		}
		for _, it := range top10 {
			if it.Count > tenth && !top[it.Item] {
				t.Fatalf("window ending %s: %q (%d) is in the exact top 10 but not in the snapshot's", time.UnixMilli(endMs), it.Item, it.Count)
			}
		}
	}
	t.Logf("%d snapshots checked against exact counts", len(byEnd))
	if len(byEnd) < least {
		t.Fatalf("only %d snapshots", len(byEnd))
	}
}

// sameSnapshots fails unless got, another run's snapshots over the same queries, holds what
// every run reproduces (README, "What is reproducible"): the same windows, each complete, with
// the exact top 10 (checkExact) and every item's true count within its bounds. An item's count
// and error are bounds from the sketch and may differ between runs.
func sameSnapshots(t *testing.T, want, got []row, queries []query) {
	t.Helper()
	windows := func(rows []row) []int64 {
		var ends []int64
		for _, r := range rows {
			if e := r.WindowEnd.UnixMilli(); len(ends) == 0 || ends[len(ends)-1] != e {
				ends = append(ends, e)
			}
		}
		return ends
	}
	if w, g := windows(want), windows(got); !slices.Equal(w, g) {
		t.Fatalf("%d windows from %s to %s, want %d from %s to %s", len(g), time.UnixMilli(g[0]), time.UnixMilli(g[len(g)-1]),
			len(w), time.UnixMilli(w[0]), time.UnixMilli(w[len(w)-1]))
	}
	checkExact(t, got, queries, len(windows(want)))
}

// sameLatest is sameSnapshots for the latest snapshot in Redis.
func sameLatest(t *testing.T, want, got topics.TopKSnapshot, queries []query) {
	t.Helper()
	if !got.WindowStart.Equal(want.WindowStart) || !got.WindowEnd.Equal(want.WindowEnd) || got.Version != want.Version ||
		!slices.Equal(got.MissingPartitions, want.MissingPartitions) || got.Dropped != want.Dropped || len(got.Items) != len(want.Items) {
		t.Fatalf("latest snapshot %+v, want the window of %+v", got, want)
	}
	rows := make([]row, len(got.Items))
	for i, it := range got.Items {
		rows[i] = row{WindowEnd: got.WindowEnd, Rank: uint32(i + 1), Item: it.Item, Count: it.Count, Error: it.Error}
	}
	checkExact(t, rows, queries, 1)
}

// complete tells whether rows (ordered by window end) hold every window from the first to the
// last, one slide apart.
func complete(rows []row) bool {
	if len(rows) == 0 {
		return false
	}
	ends := map[int64]bool{}
	for _, r := range rows {
		ends[r.WindowEnd.UnixMilli()] = true
	}
	return contiguous(len(ends), rows[0].WindowEnd, rows[len(rows)-1].WindowEnd)
}

// contiguous tells whether n distinct windows from the one ending first to the one ending last
// are every window between them, one slide apart.
func contiguous(n int, first, last time.Time) bool { return n == int(last.Sub(first)/e2eSlide)+1 }

// TestHotSearchIdlePartition: live queries (event time = now) on every input partition but
// one, which gets no traffic for a minute: snapshots keep coming, complete and fresh, once the
// silent partition has been idle for --hot-idle, and after it speaks again.
func TestHotSearchIdlePartition(t *testing.T) {
	t.Parallel()
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		const silent, idle = int32(3), 30 * time.Second // idle: the default --hot-idle
		r := e2e.NewRun(t, brokers, "hotidle")
		kc, rdb := r.Kafka, r.Redis
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		r.Start("processor") // every default: the 1 h window, 5 s slides, 30 s idle time, K 100
		cl, err := kc.KgoClient(kgo.ProducerLinger(5 * time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()

		type sample struct {
			at   time.Time
			snap topics.TopKSnapshot
		}
		var samples []sample
		topic := string(kc.Names.Stream(topics.SearchQueries))
		t0 := time.Now()
		silenceStart, silenceEnd, end := t0.Add(10*time.Second), t0.Add(70*time.Second), t0.Add(90*time.Second)
		rng := rand.New(rand.NewPCG(3, 4))
		for now := time.Now(); now.Before(end); now = time.Now() {
			for range 4 {
				user := fmt.Sprint("u", rng.IntN(1000))
				if kafka.PartitionOf(user, 8) == silent && now.After(silenceStart) && now.Before(silenceEnd) {
					continue
				}
				v := searchQuery(fmt.Sprint("idle term ", int(10*rng.Float64()*rng.Float64())), now.UnixMilli(), user)
				cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(user), Value: v}, nil)
			}
			if raw, err := rdb.Get(ctx, "hot:search:latest").Bytes(); err == nil {
				var s topics.TopKSnapshot
				if err := json.Unmarshal(raw, &s); err != nil {
					t.Fatal(err)
				}
				samples = append(samples, sample{now, s})
			}
			time.Sleep(40 * time.Millisecond)
		}
		// From when the silent partition has been idle for --hot-idle (plus a slide and the
		// lateness), the latest snapshot must stay within a slide, the lateness and a margin of
		// now; without the idle rule it would stay at the silence's start.
		const maxLag = 10 * time.Second
		checked := 0
		for _, s := range samples {
			if s.at.Before(silenceStart.Add(idle + 10*time.Second)) {
				continue
			}
			if lag := s.at.Sub(s.snap.WindowEnd); lag > maxLag {
				t.Fatalf("at %s (%s into the silence) the latest snapshot ends at %s: %s behind", s.at.Format(time.TimeOnly),
					s.at.Sub(silenceStart).Round(time.Second), s.snap.WindowEnd.Format(time.TimeOnly), lag.Round(time.Millisecond))
			}
			if len(s.snap.MissingPartitions) > 0 || len(s.snap.Items) == 0 {
				t.Fatalf("snapshot ending %s: missing %v, %d items", s.snap.WindowEnd, s.snap.MissingPartitions, len(s.snap.Items))
			}
			checked++
		}
		if checked < 100 {
			t.Fatalf("only %d samples of the latest snapshot checked", checked)
		}
	})
}
