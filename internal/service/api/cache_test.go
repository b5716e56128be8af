package api

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTTLCacheRules: a board becomes hot after HotBoardReads reads within the TTL, is then
// loaded once and served from memory until the TTL ends; concurrent misses share one load; a
// failed load is not kept; TTL 0 turns a board cache off; the tracked keys are bounded.
func TestTTLCacheRules(t *testing.T) {
	ctx := context.Background()
	var loads atomic.Int64
	load := func(v int) func(context.Context) (int, error) {
		return func(context.Context) (int, error) { loads.Add(1); return v, nil }
	}

	c := newTTLCache[int]("test", time.Hour, HotBoardReads)
	for i := range HotBoardReads {
		if _, ok, _ := c.get(ctx, "b", time.Second, load(1)); ok {
			t.Fatalf("read %d of a cold board was served by the cache", i+1)
		}
	}
	if v, ok, err := c.get(ctx, "b", time.Second, load(1)); !ok || err != nil || v != 1 {
		t.Fatalf("read %d: %v %v %v, want the loaded value", HotBoardReads+1, v, ok, err)
	}
	for range 100 {
		if v, ok, _ := c.get(ctx, "b", time.Second, load(2)); !ok || v != 1 {
			t.Fatalf("within the TTL: %v %v, want the cached 1", v, ok)
		}
	}
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d loads, want 1", n)
	}
	// Past the TTL, a board loaded within the last two TTLs is loaded again at its next read
	// (not read HotBoardReads more times first); past two TTLs it is cold again.
	e := c.keys["b"]
	e.readAt, e.window = time.Now().Add(-3*time.Hour/2), time.Now().Add(-3*time.Hour/2)
	if v, ok, _ := c.get(ctx, "b", time.Second, load(2)); !ok || v != 2 || loads.Load() != 2 {
		t.Fatalf("a hot board past its TTL: %v %v after %d loads, want a new load", v, ok, loads.Load())
	}
	e.readAt, e.window = time.Now().Add(-5*time.Hour/2), time.Now().Add(-5*time.Hour/2)
	if _, ok, _ := c.get(ctx, "b", time.Second, load(3)); ok {
		t.Fatal("a board not loaded for two TTLs was served by the cache at its first read")
	}

	// Concurrent misses share one load.
	hot := newTTLCache[int]("test", time.Hour, 0)
	release := make(chan struct{})
	var wg sync.WaitGroup
	loads.Store(0)
	for range 50 {
		wg.Go(func() {
			v, ok, err := hot.get(ctx, "", time.Second, func(context.Context) (int, error) {
				loads.Add(1)
				<-release
				return 7, nil
			})
			if !ok || err != nil || v != 7 {
				t.Errorf("shared load: %v %v %v", v, ok, err)
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // the waiters join the flight
	close(release)
	wg.Wait()
	if n := loads.Load(); n < 1 || n > 2 { // one, or two if a waiter came after the first ended
		t.Fatalf("%d loads for 50 concurrent misses", n)
	}

	// A failed load is not kept: the next read loads again.
	failing := newTTLCache[int]("test", time.Hour, 0)
	boom := errors.New("boom")
	if _, _, err := failing.get(ctx, "", time.Second, func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed load: %v", err)
	}
	if v, ok, err := failing.get(ctx, "", time.Second, load(3)); !ok || err != nil || v != 3 {
		t.Fatalf("after a failed load: %v %v %v", v, ok, err)
	}

	// TTL 0: a board cache is off, whatever the reads.
	off := newTTLCache[int]("test", 0, HotBoardReads)
	for range 10 {
		if _, ok, _ := off.get(ctx, "b", time.Second, load(1)); ok {
			t.Fatal("a board cache with TTL 0 served a read")
		}
	}
	if len(off.keys) != 0 {
		t.Fatalf("a board cache with TTL 0 tracks %d keys", len(off.keys))
	}

	// The keys are bounded: when every tracked key is in use, a new one is not tracked.
	full := newTTLCache[int]("test", time.Hour, HotBoardReads)
	for i := range maxCachedBoards + 10 {
		full.get(ctx, strconv.Itoa(i), time.Second, load(1))
	}
	if n := len(full.keys); n != maxCachedBoards {
		t.Fatalf("%d keys tracked, want at most %d", n, maxCachedBoards)
	}
}

// TestLastGoodKeepsTheLastAnswered: random answers of a few dozen URIs into a lastGood of 8
// entries, against a model (the URIs by the time of their last answer): a URI's copy is kept
// exactly while it is among the 8 answered last, with its last answer and its age.
func TestLastGoodKeepsTheLastAnswered(t *testing.T) {
	const max = 8
	l := newLastGood(max)
	rng := rand.New(rand.NewPCG(5, 6))
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var order []string // most recently answered first
	last := map[string]int64{}
	for step := range int64(20_000) {
		uri := "/v1/boards/steps/members/m" + strconv.Itoa(rng.IntN(3*max))
		if rng.IntN(3) > 0 {
			l.put(uri, Page{Total: step}, base.Add(time.Duration(step)*time.Millisecond))
			order = slices.DeleteFunc(order, func(u string) bool { return u == uri })
			order = append([]string{uri}, order...)
			last[uri] = step
			continue
		}
		got, ok := l.get(uri, base.Add(time.Duration(step)*time.Millisecond))
		want := slices.Index(order, uri)
		switch {
		case ok != (want >= 0 && want < max):
			t.Fatalf("step %d: %s kept %v; it is %d-th most recently answered (%d kept)", step, uri, ok, want+1, max)
		case ok && (got.(Page).Total != last[uri] || !got.(Page).Stale || *got.(Page).StaleAgeMs != step-last[uri]):
			t.Fatalf("step %d: %s = %+v, want its answer of step %d, %d ms old", step, uri, got, last[uri], step-last[uri])
		}
	}
}
