package pipelinee2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/testenv"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// stepsRun is one run of `rankstream process` instances on topics and a Redis database of
// their own, with a truth of the step reports sent.
type stepsRun struct {
	t       testing.TB
	brokers []string
	prefix  string
	rdb     *goredis.Client
	redis   string
	extra   []string // more flags of every instance
	procs   []*testenv.Process
	https   []string
	users   string           // prefix of this run's user ids
	want    map[string]int64 // step key -> merged steps
	sent    int
}

func newStepsRun(t testing.TB, brokers []string, redisAddr string, redisDB int, extra ...string) *stepsRun {
	t.Helper()
	r := &stepsRun{
		t: t, brokers: brokers, prefix: testenv.UniqueName(t, "outage") + ".",
		rdb:   goredis.NewClient(&goredis.Options{Addr: redisAddr, DB: redisDB}),
		redis: fmt.Sprintf("redis://%s/%d", redisAddr, redisDB),
		extra: extra, want: map[string]int64{}, users: fmt.Sprintf("u%08x-", rand.Uint32()),
	}
	t.Cleanup(func() { r.rdb.Close() })
	return r
}

// start starts an instance of `rankstream process` (it creates the topics itself).
func (r *stepsRun) start(name string) *testenv.Process {
	r.t.Helper()
	addr := testenv.FreeAddr(r.t)
	args := append([]string{"process", "--brokers", strings.Join(r.brokers, ","), "--redis", r.redis,
		"--topic-prefix", r.prefix, "--http", addr, "--log-level", "info"}, r.extra...)
	p := testenv.StartProcess(r.t, name, testenv.Rankstream(r.t), args...)
	r.procs = append(r.procs, p)
	r.https = append(r.https, addr)
	return p
}

// report sends n step reports of this run's users 0 to users-1 (the steps value grows with every
// round, so each report raises its user's day) and records the truth.
func (r *stepsRun) report(n, users int) {
	r.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.brokers...), kgo.ProducerLinger(5*time.Millisecond),
		kgo.RecordDeliveryTimeout(2*time.Minute))
	if err != nil {
		r.t.Fatal(err)
	}
	defer cl.Close()
	topic := r.prefix + string(topics.StepsReported)
	now := time.Now().UTC()
	day := board.DayOf(now, time.UTC)
	var recs []*kgo.Record
	for i := range n {
		user := r.users + strconv.Itoa(i%users)
		r.sent++
		steps := int64(r.sent)
		v, _ := json.Marshal(map[string]any{"request_id": "r" + strconv.Itoa(r.sent), "user_id": user, "device_id": "d",
			"steps": steps, "ts": now.Format(time.RFC3339Nano), "tz": "UTC"})
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(user), Value: v})
		r.want[rsredis.StepKey(day, user)] = max(r.want[rsredis.StepKey(day, user)], steps)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		r.t.Fatalf("produce: %v", err)
	}
}

// problem says how Redis differs from the truth ("" when it does not).
func (r *stepsRun) problem() string {
	for k, w := range r.want {
		got, err := r.rdb.Get(context.Background(), k).Result()
		if err != nil || got != strconv.FormatInt(w, 10) {
			return fmt.Sprintf("%s = %q (%v), want %d", k, got, err, w)
		}
	}
	return ""
}

// waitExact waits until Redis holds the truth, failing if an instance exits meanwhile.
// recovers is what follows the broker's start (after it came back, or started late): the
// process becomes ready, and new reports reach Redis exactly. It logs how long each took.
func (r *stepsRun) recovers(how string) {
	r.t.Helper()
	started := time.Now()
	r.waitFor(3*time.Minute, "ready after the broker "+how, func() bool { return r.ready(0) })
	r.t.Logf("ready %s after the broker %s", time.Since(started).Round(time.Millisecond), how)
	r.report(2000, 500)
	r.waitExact(2 * time.Minute)
	r.t.Logf("exact %s after the broker %s", time.Since(started).Round(time.Millisecond), how)
}

func (r *stepsRun) waitExact(timeout time.Duration) {
	r.t.Helper()
	r.waitFor(timeout, "exact step values", func() bool { return r.problem() == "" })
}

// waitFor polls cond until it holds, failing when an instance exited or timeout passed.
func (r *stepsRun) waitFor(timeout time.Duration, what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		r.checkUp()
		if time.Now().After(deadline) {
			r.t.Fatalf("after %s still waiting for %s (%s)", timeout, what, r.problem())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkUp fails the test if an instance has exited.
func (r *stepsRun) checkUp() {
	r.t.Helper()
	for _, p := range r.procs {
		if err := p.Exited(); err != nil {
			r.t.Fatalf("%s %v; its output:\n%s", p.Name, err, p.Output())
		}
	}
}

// ready asks instance i's /readyz.
func (r *stepsRun) ready(i int) bool {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + r.https[i] + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestConcurrentStartOnNewTopics starts two, then three instances of `rankstream process` at
// the same instant on topics that do not exist yet: they race to create them (goka's topic
// manager used to fail one of them with "topic already exists", 3 starts in 10), and every
// instance must stay up and the results be exact.
func TestConcurrentStartOnNewTopics(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		redisAddr, db := testenv.RedisAddr(t)
		for round, n := range []int{2, 3, 2, 3} {
			t.Run(fmt.Sprintf("round%d_%dinstances", round+1, n), func(t *testing.T) {
				r := newStepsRun(t, brokers, redisAddr, db)
				for i := range n {
					r.start(fmt.Sprintf("process-%d", i+1))
				}
				r.report(2000, 200)
				r.waitExact(2 * time.Minute)
				r.waitFor(time.Minute, "every instance ready", func() bool {
					for i := range r.procs {
						if !r.ready(i) {
							return false
						}
					}
					return true
				})
				r.checkUp()
			})
		}
	})
}

// TestBrokerOutage stops a private broker for 30 s while `rankstream process` runs with step
// reports in flight (goka gave up and the process exited after 6-13 s, 4 trials in 4), and
// starts `rankstream process` while the broker is down (it exited at once): the process must
// stay up, say it is not ready meanwhile, be ready again after, and the results be exact.
func TestBrokerOutage(t *testing.T) {
	redisAddr, db := testenv.RedisAddr(t)
	t.Run("stopped_30s_while_running", func(t *testing.T) {
		t.Parallel()
		ks := testenv.StartKafkaServer(t)
		r := newStepsRun(t, ks.Brokers(), redisAddr, db)
		r.start("process")
		r.report(2000, 500)
		r.waitExact(2 * time.Minute)
		r.waitFor(time.Minute, "ready before the outage", func() bool { return r.ready(0) })

		r.report(5000, 500) // in flight when the broker goes
		stopped := time.Now()
		ks.Stop(syscall.SIGTERM)
		t.Logf("broker stopped (SIGTERM took %s)", time.Since(stopped).Round(time.Millisecond))
		r.waitFor(time.Minute, "not ready during the outage", func() bool { return !r.ready(0) })
		t.Logf("not ready %s after the stop", time.Since(stopped).Round(time.Millisecond))
		for time.Since(stopped) < 30*time.Second {
			r.checkUp()
			time.Sleep(500 * time.Millisecond)
		}
		ks.Start()
		r.recovers("came back")
	})
	t.Run("down_at_startup", func(t *testing.T) {
		t.Parallel()
		ks := testenv.StartKafkaServer(t)
		ks.Stop(syscall.SIGKILL)
		r := newStepsRun(t, ks.Brokers(), redisAddr, db)
		r.start("process")
		down := time.Now()
		for time.Since(down) < 20*time.Second {
			r.checkUp()
			if r.ready(0) {
				t.Fatal("ready while the broker is down")
			}
			time.Sleep(500 * time.Millisecond)
		}
		ks.Start()
		r.recovers("started")
	})
}

// TestClickHouseOutage runs `rankstream process --history` against a private clickhouse-server
// that is down when the process starts (the process used to exit at once) and later goes down
// for 60 s while the process runs (the hot list in Redis used to stay frozen): steps and hot
// search must run while it is down, Redis must keep receiving new windows, and once it is back
// ClickHouse must hold, under FINAL, exactly the row set of every window Redis published.
func TestClickHouseOutage(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		ch := testenv.StartClickHouseServer(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		sink, err := rsclickhouse.Open(ctx, ch.Addr(), "rankstream")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sink.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		sink.Close()
		ch.Stop(syscall.SIGTERM)

		redisAddr, db := testenv.RedisAddr(t)
		// A 10 s window sliding every second: the minutes of this test (and its 60 s outage)
		// then close many windows whose rows ClickHouse must hold. The default window (1 h,
		// 5 s slides) runs in TestHotSearch, also with --history.
		r := newStepsRun(t, brokers, redisAddr, db, "--history", "--clickhouse", ch.Addr(), "--clickhouse-database", "rankstream",
			"--hot-window", "10s", "--hot-slide", "1s")
		r.start("process")
		r.waitFor(2*time.Minute, "ready while ClickHouse is down", func() bool { return r.ready(0) })
		go produceSearches(ctx, t, brokers, r.prefix+string(topics.SearchQueries))
		r.report(1000, 100)
		r.waitExact(2 * time.Minute)
		seen := map[int64]topics.TopKSnapshot{} // window end (ms) -> the latest snapshot of it seen in Redis
		watch := func(d time.Duration) int {
			t.Helper()
			before := len(seen)
			for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
				r.checkUp()
				if raw, err := r.rdb.Get(ctx, rsredis.HotKey(topics.SearchStream)).Bytes(); err == nil {
					var s topics.TopKSnapshot
					if err := json.Unmarshal(raw, &s); err != nil {
						t.Fatal(err)
					}
					seen[s.WindowEnd.UnixMilli()] = s
				}
			}
			return len(seen) - before
		}
		if n := watch(10 * time.Second); n < 3 {
			t.Fatalf("%d new windows in Redis in 10 s while ClickHouse was down since the start", n)
		}

		ch.Start()
		rows := func() map[int64][]topics.TopKItem { return historyRows(t, ctx, ch.Addr()) }
		r.waitFor(2*time.Minute, "history rows once ClickHouse is up", func() bool { return len(rows()) > 0 })
		watch(5 * time.Second)

		stopped := time.Now()
		ch.Stop(syscall.SIGTERM)
		n := watch(60 * time.Second)
		t.Logf("ClickHouse down for %s: %d new windows in Redis meanwhile", time.Since(stopped).Round(time.Second), n)
		if n < 20 {
			t.Fatalf("only %d new windows in Redis during a 60 s ClickHouse outage (1 s slide)", n)
		}
		ch.Start()
		back := time.Now()
		watch(5 * time.Second)

		var complete []int64
		for end, s := range seen {
			if len(s.MissingPartitions) == 0 {
				complete = append(complete, end)
			}
		}
		problem := "not checked yet"
		deadline := time.Now().Add(3 * time.Minute)
		for problem != "" {
			if time.Now().After(deadline) {
				t.Fatalf("3 minutes after ClickHouse came back: %s", problem)
			}
			time.Sleep(time.Second)
			got := rows()
			problem = ""
			for _, end := range complete {
				if want := seen[end].Items; fmt.Sprint(got[end]) != fmt.Sprint(want) {
					problem = fmt.Sprintf("window ending %s: ClickHouse FINAL %v, Redis %v", time.UnixMilli(end).UTC(), got[end], want)
					break
				}
			}
		}
		t.Logf("%d complete windows seen in Redis, all in ClickHouse %s after it came back", len(complete), time.Since(back).Round(time.Millisecond))
	})
}

// historyRows reads topk_history under FINAL: the items of every window, by rank. A window
// with a rank twice or a gap in its ranks fails the test.
func historyRows(t *testing.T, ctx context.Context, addr string) map[int64][]topics.TopKItem {
	t.Helper()
	conn, err := clickhouse.Open(&clickhouse.Options{Addr: []string{addr}, Auth: clickhouse.Auth{Database: "rankstream"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var rows []struct {
		End   time.Time `ch:"window_end"`
		Rank  uint32    `ch:"rank"`
		Item  string    `ch:"item"`
		Count uint64    `ch:"count"`
		Error uint64    `ch:"error"`
	}
	if err := conn.Select(ctx, &rows, "SELECT window_end, rank, item, count, error FROM topk_history FINAL ORDER BY window_end, rank"); err != nil {
		return nil // down or restarting: nothing yet
	}
	out := map[int64][]topics.TopKItem{}
	for _, r := range rows {
		end := r.End.UnixMilli()
		if int(r.Rank) != len(out[end])+1 {
			t.Fatalf("window ending %s: rank %d after %d ranks under FINAL", r.End, r.Rank, len(out[end]))
		}
		out[end] = append(out[end], topics.TopKItem{Item: r.Item, Count: r.Count, Error: r.Error})
	}
	return out
}

// produceSearches sends about 250 search queries a second, event time now, over 40 terms of
// falling popularity, until ctx ends.
func produceSearches(ctx context.Context, t *testing.T, brokers []string, topic string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		t.Error(err)
		return
	}
	defer cl.Close()
	for i := 0; ctx.Err() == nil; i++ {
		now := time.Now().UTC().Format(time.RFC3339Nano)
		for j := range 5 {
			term := fmt.Sprintf("term %d", (i*5+j)%((i*5+j)%40+1))
			user := fmt.Sprintf("user%d", (i*5+j)%997)
			v, _ := json.Marshal(map[string]string{"query": term, "ts": now, "user_id": user})
			cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(user), Value: v}, nil)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
