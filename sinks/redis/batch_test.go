package redis

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
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

// TestBatchedReaderKeepsTheDeadlineOfAReadOfItsOwn: on a batched Reader, a read of more than
// maxBatchedCmds commands (a page of a 16-shard board: 32) has a round trip of its own, which
// still ends at its context's deadline when Redis answers nothing (SIGSTOP), as the batcher's
// reads do (docs/contract.md: one deadline for every Redis call of a request); and once Redis
// answers again, the same read succeeds.
func TestBatchedReaderKeepsTheDeadlineOfAReadOfItsOwn(t *testing.T) {
	rs := testenv.StartRedisServer(t)
	rdb, err := OpenReader(rs.Addr(), time.Minute) // network timeouts far beyond the deadline
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	r := NewBatchedReader(rdb)
	ref := BoardRef{Board: "b", Period: board.PeriodTotal, PeriodID: "total", Shards: 16}
	read := func(deadline time.Duration) (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		start := time.Now()
		_, _, err := r.BoardPage(ctx, ref, 0, 10)
		return time.Since(start), err
	}
	if _, err := read(time.Second); err != nil {
		t.Fatalf("before the stop: %v", err)
	}
	rs.Pause()
	t.Cleanup(rs.Resume)
	const deadline, slack = 200 * time.Millisecond, time.Second
	if took, err := read(deadline); !IsTimeout(err) || took > deadline+slack {
		t.Errorf("Redis stopped: %v after %s, want a timeout within %s (+%s)", err, took, deadline, slack)
	}
	rs.Resume()
	if _, err := read(5 * time.Second); err != nil {
		t.Errorf("after SIGCONT: %v", err)
	}
}
