package redis

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rankstream/rankstream/internal/testenv"
)

// TestBatcherLoopLingersThenEnds: the batcher's goroutine waits for reads once none is left
// (a read then wakes it instead of starting another), ends after loopLinger without one, and
// the next read starts it again; every read gets its own answer throughout, including reads
// that come as the linger ends.
func TestBatcherLoopLingersThenEnds(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	b := newBatcher(rdb)
	state := func() loopState {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.loop
	}
	read := func() {
		t.Helper()
		p := rdb.Pipeline()
		get := p.Get(ctx, "k")
		if err := b.exec(ctx, p.Cmds()); err != nil || get.Val() != "v" {
			t.Errorf("read: %q, %v", get.Val(), err)
		}
	}
	waitState := func(want loopState, within time.Duration) {
		t.Helper()
		for end := time.Now().Add(within); state() != want; time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("loop state %d after %s, want %d", state(), within, want)
			}
		}
	}
	read()
	waitState(loopWaiting, time.Second)
	read() // wakes the waiting loop
	waitState(loopWaiting, time.Second)
	waitState(loopNone, 2*loopLinger)
	read() // starts it again
	waitState(loopWaiting, time.Second)
	// Reads from many goroutines across the end of a linger.
	time.Sleep(loopLinger - 5*time.Millisecond)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				read()
				time.Sleep(time.Millisecond)
			}
		})
	}
	wg.Wait()
}
