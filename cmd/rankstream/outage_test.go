package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/rank"
	"github.com/rankstream/rankstream/internal/testenv"
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
	addr := freeAddr(r.t)
	args := append([]string{"process", "--brokers", strings.Join(r.brokers, ","), "--redis", r.redis,
		"--topic-prefix", r.prefix, "--http", addr, "--log-level", "info"}, r.extra...)
	p := testenv.StartProcess(r.t, name, testenv.Rankstream(r.t), args...)
	r.procs = append(r.procs, p)
	r.https = append(r.https, addr)
	return p
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
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
	day := rank.DayOf(now, time.UTC)
	var recs []*kgo.Record
	for i := range n {
		user := r.users + strconv.Itoa(i%users)
		r.sent++
		steps := int64(r.sent)
		v, _ := json.Marshal(map[string]any{"request_id": "r" + strconv.Itoa(r.sent), "user_id": user, "device_id": "d",
			"steps": steps, "ts": now.Format(time.RFC3339Nano), "tz": "UTC"})
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(user), Value: v})
		r.want[rank.StepKey(day, user)] = max(r.want[rank.StepKey(day, user)], steps)
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
		restarted := time.Now()
		r.waitFor(3*time.Minute, "ready after the outage", func() bool { return r.ready(0) })
		t.Logf("ready %s after the broker came back", time.Since(restarted).Round(time.Millisecond))
		r.report(2000, 500)
		r.waitExact(2 * time.Minute)
		t.Logf("exact %s after the broker came back", time.Since(restarted).Round(time.Millisecond))
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
		restarted := time.Now()
		r.waitFor(3*time.Minute, "ready", func() bool { return r.ready(0) })
		t.Logf("ready %s after the broker started", time.Since(restarted).Round(time.Millisecond))
		r.report(2000, 500)
		r.waitExact(2 * time.Minute)
		t.Logf("exact %s after the broker started", time.Since(restarted).Round(time.Millisecond))
	})
}
