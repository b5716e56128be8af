package api

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestCoalescerReadsAfterEveryRequest: identical reads that arrive while one runs share the
// next read, which starts only after they all arrived (never the one already running), so no
// answer predates its request; other keys read on their own; a failure is shared by the
// requests of that read only; a waiter gives up at its deadline.
func TestCoalescerReadsAfterEveryRequest(t *testing.T) {
	ctx := context.Background()
	c := newCoalescer[int]()
	hits0 := count(c.hits)
	var reads atomic.Int64
	started := make(chan struct{}, 10)
	release := make(chan struct{})
	read := func(context.Context) (int, error) {
		n := int(reads.Add(1))
		started <- struct{}{}
		<-release
		return n, nil
	}

	// The first request runs read 1.
	first := make(chan int, 1)
	go func() { v, _ := c.do(ctx, "k", time.Second, read); first <- v }()
	<-started
	// 20 requests arrive while read 1 runs: all share read 2, started after read 1 ended.
	var wg sync.WaitGroup
	got := make([]int, 20)
	for i := range got {
		wg.Go(func() {
			v, err := c.do(ctx, "k", time.Second, read)
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
	}
	pollFor(t, "20 requests waiting for read 2", func() bool { // a hit is counted once joined
		return count(c.hits)-hits0 == 20 && reads.Load() == 1
	})
	// Another key does not wait for k.
	other := make(chan int, 1)
	go func() { v, _ := c.do(ctx, "other", time.Second, read); other <- v }()
	<-started
	release <- struct{}{} // ends read 1 or the other key's read
	release <- struct{}{}
	<-started // read 2 (or the other's) started after read 1 ended
	close(release)
	wg.Wait()
	if v := <-first; v != 1 {
		t.Fatalf("first request: read %d, want 1", v)
	}
	<-other
	for i, v := range got {
		if v == 1 {
			t.Fatalf("request %d arrived during read 1 and got its answer", i)
		}
		if v != got[0] {
			t.Fatalf("requests that arrived during read 1 got reads %d and %d, want one shared read", got[0], v)
		}
	}
	if n := reads.Load(); n != 3 {
		t.Fatalf("%d reads, want 3 (k twice, other once)", n)
	}
	if len(c.keys) != 0 {
		t.Fatalf("keys left after the reads ended: %v", c.keys)
	}

	// A failed read fails its requests only; the next read is a new one.
	boom := errors.New("boom")
	if _, err := c.do(ctx, "k", time.Second, func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed read: %v, want boom", err)
	}
	if v, err := c.do(ctx, "k", time.Second, func(context.Context) (int, error) { return 7, nil }); err != nil || v != 7 {
		t.Fatalf("after a failure: %v %v, want a read of its own", v, err)
	}

	// A waiter gives up at its deadline; the read it waited for still completes for others.
	hold := make(chan struct{})
	go func() {
		_, _ = c.do(ctx, "slow", time.Second, func(context.Context) (int, error) { <-hold; return 1, nil })
	}()
	pollFor(t, "the slow read", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.keys["slow"] != nil })
	wctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := c.do(wctx, "slow", time.Second, func(context.Context) (int, error) { return 2, nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiter past its deadline: %v, want DeadlineExceeded", err)
	}
	close(hold)
	pollFor(t, "no read left", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return len(c.keys) == 0 })
}

// count is a counter's value.
func count(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

// pollFor polls cond for up to 10 s.
func pollFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for: %s", what)
		}
	}
}
