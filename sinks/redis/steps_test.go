package redis_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// acks records the order in which done callbacks fire.
type acks struct {
	mu   sync.Mutex
	got  []int
	errs []error
}

func (a *acks) done(i int) func(error) {
	return func(err error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.got = append(a.got, i)
		a.errs = append(a.errs, err)
	}
}

func (a *acks) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.got)
}

func runWriter(t testing.TB, rdb goredis.UniversalClient, opts rsredis.StepsOptions) *rsredis.StepsWriter {
	t.Helper()
	opts.Logger = quiet
	w := rsredis.NewStepsWriter(rdb, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func waitAcks(t *testing.T, a *acks, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for a.count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d acks after 10 s", a.count(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStepsWriterWritesValuesAndBoards(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		w := runWriter(t, rdb, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Interval: 20 * time.Millisecond}})
		day := board.Day(20261130)
		base := day.FirstInstant().UnixMilli() + 20*3600*1000
		var a acks
		updates := []*board.StepUpdate{
			{User: "alice", Day: day, Steps: 500, ReachedMs: base + 10, Region: "eu"},
			{User: "bob", Day: day, Steps: 500, ReachedMs: base + 5, Region: "eu"},
			nil, // a dead-lettered record: nothing to write, but its ack keeps its place
			{User: "carol", Day: day, Steps: 900, ReachedMs: base, Region: "us"},
			{User: "alice", Day: day, Steps: 700, ReachedMs: base + 20, Region: "us", Left: []string{"eu"}},
			// A late, smaller write (a redelivery) must not lower what readers see.
			{User: "carol", Day: day, Steps: 100, ReachedMs: base, Region: "us"},
		}
		for i, u := range updates {
			w.Submit(u, a.done(i))
		}
		waitAcks(t, &a, len(updates))
		for i, got := range a.got {
			if got != i || a.errs[i] != nil {
				t.Fatalf("acks %v errs %v: want submission order without errors", a.got, a.errs)
			}
		}
		ctx := context.Background()
		for user, want := range map[string]string{"alice": "700", "bob": "500", "carol": "900"} {
			if got := rdb.Get(ctx, rsredis.StepKey(day, user)).Val(); got != want {
				t.Errorf("step key of %s = %q, want %s", user, got, want)
			}
			ttl := rdb.TTL(ctx, rsredis.StepKey(day, user)).Val()
			if ttl <= 0 {
				t.Errorf("step key of %s has no TTL", user)
			}
		}
		order := func(key string) []string {
			return rdb.ZRangeArgs(ctx, goredis.ZRangeArgs{Key: key, Start: 0, Stop: -1, Rev: true}).Val()
		}
		if got := order(rsredis.StepsGlobalBoard(day)); !equal(got, []string{"carol", "alice", "bob"}) {
			t.Errorf("global board %v", got)
		}
		if got := order(rsredis.StepsRegionBoard("eu", day)); !equal(got, []string{"bob"}) {
			t.Errorf("eu board %v: alice moved to us", got)
		}
		if got := order(rsredis.StepsRegionBoard("us", day)); !equal(got, []string{"carol", "alice"}) {
			t.Errorf("us board %v", got)
		}
		score := rdb.ZScore(ctx, rsredis.StepsGlobalBoard(day), "carol").Val()
		if s, r := board.DayComposite(day).Decode(score); s != 900 || r != base {
			t.Errorf("carol's composite decodes to %d@%d", s, r)
		}
	})
}

// TestStepsWriterRemovesLeftRegionsOnEveryUpdate: a crash after the table stored a move but
// before the boards were written leaves the user on the board they left; the redelivered
// update (the same values) carries the regions left and removes them again.
func TestStepsWriterRemovesLeftRegionsOnEveryUpdate(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		w := runWriter(t, rdb, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Interval: 20 * time.Millisecond}})
		day := board.Day(20261130)
		ctx := context.Background()
		rdb.ZAdd(ctx, rsredis.StepsRegionBoard("eu-west", day), goredis.Z{Score: 1, Member: "alice"}, goredis.Z{Score: 1, Member: "bob"})
		rdb.ZAdd(ctx, rsredis.StepsRegionBoard("asia", day), goredis.Z{Score: 1, Member: "alice"})
		var a acks
		w.Submit(&board.StepUpdate{User: "alice", Day: day, Steps: 200, ReachedMs: day.FirstInstant().UnixMilli(), Region: "us-east", Left: []string{"asia", "eu-west"}}, a.done(0))
		waitAcks(t, &a, 1)
		if got := rdb.ZRange(ctx, rsredis.StepsRegionBoard("eu-west", day), 0, -1).Val(); !equal(got, []string{"bob"}) {
			t.Errorf("eu-west board %v, want only bob", got)
		}
		if n := rdb.Exists(ctx, rsredis.StepsRegionBoard("asia", day)).Val(); n != 0 {
			t.Errorf("asia board still exists")
		}
		if got := rdb.ZRange(ctx, rsredis.StepsRegionBoard("us-east", day), 0, -1).Val(); !equal(got, []string{"alice"}) {
			t.Errorf("us-east board %v", got)
		}
	})
}

func TestStepsWriterTieGoesToWhoReachedFirst(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		w := runWriter(t, rdb, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Interval: 20 * time.Millisecond}})
		day := board.Day(20261130)
		base := day.FirstInstant().UnixMilli() + 3600*1000
		var a acks
		// zed reached 1000 one millisecond before amy: zed ranks first despite the member order.
		w.Submit(&board.StepUpdate{User: "amy", Day: day, Steps: 1000, ReachedMs: base + 1}, a.done(0))
		w.Submit(&board.StepUpdate{User: "zed", Day: day, Steps: 1000, ReachedMs: base}, a.done(1))
		waitAcks(t, &a, 2)
		if got := rdb.ZRangeArgs(context.Background(), goredis.ZRangeArgs{Key: rsredis.StepsGlobalBoard(day), Start: 0, Stop: -1, Rev: true}).Val(); !equal(got, []string{"zed", "amy"}) {
			t.Fatalf("board %v, want zed first", got)
		}
	})
}

// TestStepsWriterHoldsAcksWhileRedisIsDown: while Redis cannot be reached the writer retries
// with backoff and acknowledges nothing (so no offset is committed); once Redis is back,
// everything is written and acknowledged in order.
func TestStepsWriterHoldsAcksWhileRedisIsDown(t *testing.T) {
	addr, db := testenv.RedisAddr(t)
	real := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
	t.Cleanup(func() { real.Close() })
	proxy := testenv.NewProxy(t, addr)
	rdb := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), DB: db, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })

	proxy.SetDown(true)
	w := runWriter(t, rdb, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Interval: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}})
	day := board.Day(20261130)
	var a acks
	for i := range 50 {
		w.Submit(&board.StepUpdate{User: "u" + string(rune('a'+i%26)), Day: day, Steps: int64(i), ReachedMs: day.FirstInstant().UnixMilli()}, a.done(i))
	}
	time.Sleep(1500 * time.Millisecond)
	if n := a.count(); n != 0 {
		t.Fatalf("%d records acknowledged while Redis was down", n)
	}
	proxy.SetDown(false)
	waitAcks(t, &a, 50)
	for i, got := range a.got {
		if got != i || a.errs[i] != nil {
			t.Fatalf("ack %d = record %d (err %v): want submission order without errors", i, got, a.errs[i])
		}
	}
	if n := real.ZCard(context.Background(), rsredis.StepsGlobalBoard(day)).Val(); n != 26 {
		t.Fatalf("board has %d members after recovery, want 26", n)
	}
}

// TestStepsWriterAcknowledgesNothingAfterAFailedWrite (defect: a batch failed at the end of
// the shutdown grace, then the final flush wrote a later batch once Redis was back and
// acknowledged it, and the commit's high-water mark covered the failed records): once a
// write failed, no later record is acknowledged, and Run and Err report the failure.
func TestStepsWriterAcknowledgesNothingAfterAFailedWrite(t *testing.T) {
	addr, db := testenv.RedisAddr(t)
	proxy := testenv.NewProxy(t, addr)
	rdb := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), DB: db, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	w := rsredis.NewStepsWriter(rdb, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Interval: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, MaxPending: 5, Logger: quiet}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()

	proxy.SetDown(true)
	failures := obs.SinkWriteErrors.WithLabelValues("redis-steps")
	before := counterValue(failures)
	day := board.Day(20261130)
	var a acks
	submit := func(i int) {
		w.Submit(&board.StepUpdate{User: fmt.Sprint("u", i), Day: day, Steps: int64(i), ReachedMs: day.FirstInstant().UnixMilli()}, a.done(i))
	}
	for i := range 3 {
		submit(i) // the batch whose write will fail
	}
	testenv.WaitFor(t, 10*time.Second, "the batch's flush to fail once", func() bool { return counterValue(failures) > before })
	for i := 3; i < 5; i++ {
		submit(i) // queued behind it
	}
	cancel() // the shutdown grace is over: the retried write fails
	time.Sleep(100 * time.Millisecond)
	proxy.SetDown(false) // Redis is back before any final flush
	select {
	case err := <-ran:
		if !errors.Is(err, rsredis.ErrClosed) {
			t.Fatalf("Run = %v, want an error wrapping ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	submit(5) // after the failure: refused at once, and never blocked by MaxPending
	waitAcks(t, &a, 6)
	for i, err := range a.errs {
		if err == nil {
			t.Fatalf("record %d acknowledged after a failed write (acks %v)", a.got[i], a.got)
		}
		if a.got[i] >= 3 && !errors.Is(err, rsredis.ErrEarlierWriteFailed) {
			t.Fatalf("record %d: %v, want ErrEarlierWriteFailed", a.got[i], err)
		}
	}
	if w.Err() == nil {
		t.Fatal("Err() = nil after a failed write")
	}
}

// TestStepsWriterFlushesAFullBatchAtOnce: once MaxPending records wait (one key here, far
// below MaxBatch), the batch is flushed at once instead of at the next interval (an hour),
// and Submit takes records again: a processor blocked on a full batch waits for a write, never
// for the clock.
func TestStepsWriterFlushesAFullBatchAtOnce(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		w := runWriter(t, rdb, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Interval: time.Hour, MaxPending: 4}})
		day := board.Day(20261130)
		base := day.FirstInstant().UnixMilli()
		var a acks
		go func() { // the fifth Submit waits for the first batch's flush
			for i := range 8 { // two full batches of one user-day and dead-lettered records
				var u *board.StepUpdate
				if i%2 == 0 {
					u = &board.StepUpdate{User: "full-batch-user", Day: day, Steps: int64(100 + i), ReachedMs: base + int64(i)}
				}
				w.Submit(u, a.done(i))
			}
		}()
		waitAcks(t, &a, 8)
		for i, got := range a.got {
			if got != i || a.errs[i] != nil {
				t.Fatalf("acks %v errs %v: want submission order without errors", a.got, a.errs)
			}
		}
		if v, err := rdb.Get(context.Background(), rsredis.StepKey(day, "full-batch-user")).Result(); err != nil || v != "106" {
			t.Fatalf("steps = %q, %v; want 106", v, err)
		}
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestStepsWriterObservesBoardUpdateLatency: each value a flush wrote is observed in
// rankstream_board_update_latency_seconds, from its event time (ReachedMs) to the write.
func TestStepsWriterObservesBoardUpdateLatency(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		hist := obs.BoardUpdateLatency.WithLabelValues("redis-steps").(prometheus.Histogram)
		read := func() (uint64, float64) {
			var m dto.Metric
			if err := hist.Write(&m); err != nil {
				t.Fatal(err)
			}
			return m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()
		}
		n0, sum0 := read()
		w := runWriter(t, rdb, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Interval: 20 * time.Millisecond}})
		const age = 30 * time.Second
		reached := time.Now().Add(-age)
		var a acks
		w.Submit(&board.StepUpdate{User: "lat", Day: board.DayOf(reached, time.UTC), Steps: 10, ReachedMs: reached.UnixMilli()}, a.done(0))
		w.Submit(nil, a.done(1)) // a dead letter: nothing written, nothing observed
		waitAcks(t, &a, 2)
		deadline := time.Now().Add(10 * time.Second)
		for n, _ := read(); n == n0; n, _ = read() {
			if time.Now().After(deadline) {
				t.Fatal("no latency observed 10 s after the flush")
			}
			time.Sleep(10 * time.Millisecond)
		}
		n, sum := read()
		if got := sum - sum0; n-n0 != 1 || got < age.Seconds() || got > age.Seconds()+30 {
			t.Errorf("observed %d values, %.1f s; want 1 of %s to %s", n-n0, got, age, age+30*time.Second)
		}
	})
}
