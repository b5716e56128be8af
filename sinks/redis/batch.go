package redis

import (
	"context"
	"fmt"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// maxBatchReads bounds the reads sent in one shared round trip (a batch of top-100 pages is
// then about 64 x 10 KB of replies); the others wait for the next one.
const maxBatchReads = 64

// batcher sends the commands of the reads queued on it in shared pipelines, one round trip at
// a time: the reads queued while a round trip runs go together in the next one. Under
// concurrent load, a read then costs this process and redis-server a share of one write and
// one read of the network instead of their own, at the price of waiting for the round trip in
// flight when one is. Every command is still sent after its read was queued.
//
// One goroutine sends the round trips; once none is left to send it waits up to loopLinger
// for more before it ends. (Started anew whenever the queue ran dry, it cost a goroutine's
// start and the growth of its stack to go-redis's depth for most round trips: about 3.5% of
// serve's CPU on the board reads.)
type batcher struct {
	rdb   goredis.UniversalClient
	pipes sync.Pool // of goredis.Pipeliner, emptied, for the reads' commands (Reader.pipeline)

	mu      sync.Mutex
	pending []*batchRead
	loop    loopState
	wake    chan struct{} // the waiting loop's token (buffered: sent under mu, once per wait)
}

// loopState is what the batcher's goroutine does.
type loopState int

const (
	loopNone    loopState = iota // no goroutine: the next read starts one
	loopSending                  // sending round trips
	loopWaiting                  // waiting for a read (wake) or the end of its linger
)

// loopLinger is how long the batcher's goroutine waits for a read once none is left.
const loopLinger = time.Second

func newBatcher(rdb goredis.UniversalClient) *batcher {
	return &batcher{rdb: rdb, wake: make(chan struct{}, 1)}
}

// batchRead is one read's commands; done receives one token once they have their results
// (buffered: the loop never waits for a reader that gave up).
type batchRead struct {
	cmds []goredis.Cmder
	done chan struct{}
}

// batchReads holds the batchReads whose token was received, for the next reads.
var batchReads = sync.Pool{New: func() any { return &batchRead{done: make(chan struct{}, 1)} }}

// exec queues cmds for the next round trip and waits for their results, or for ctx to end
// (the round trip then still runs, bounded by the client's network timeouts). Its error is
// the first of cmds' errors, as a pipeline's Exec would return it.
func (b *batcher) exec(ctx context.Context, cmds []goredis.Cmder) error {
	r := batchReads.Get().(*batchRead)
	r.cmds = cmds
	b.mu.Lock()
	b.pending = append(b.pending, r)
	switch b.loop {
	case loopNone:
		b.loop = loopSending
		go b.send()
	case loopWaiting:
		b.loop = loopSending
		b.wake <- struct{}{}
	}
	b.mu.Unlock()
	select {
	case <-r.done:
		r.cmds = nil
		batchReads.Put(r)
	case <-ctx.Done(): // r is not reused: its token is still to come
		return fmt.Errorf("redis: batched read: %w", ctx.Err())
	}
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			return err
		}
	}
	return nil
}

// send sends the pending reads, at most maxBatchReads per round trip, until none has been
// left for loopLinger.
func (b *batcher) send() {
	var batch []*batchRead
	linger := time.NewTimer(loopLinger)
	linger.Stop()
	for {
		b.mu.Lock()
		n := min(len(b.pending), maxBatchReads)
		if n == 0 {
			b.loop = loopWaiting
			b.mu.Unlock()
			linger.Reset(loopLinger)
			select {
			case <-b.wake:
				linger.Stop()
				continue
			case <-linger.C:
			}
			b.mu.Lock()
			if b.loop == loopWaiting {
				b.loop = loopNone
				b.mu.Unlock()
				return
			}
			b.mu.Unlock()
			<-b.wake // a read came as the linger ended
			continue
		}
		batch = append(batch[:0], b.pending[:n]...)
		b.pending = append(b.pending[:0], b.pending[n:]...)
		b.mu.Unlock()
		pipe := b.rdb.Pipeline()
		for _, r := range batch {
			_ = pipe.BatchProcess(context.Background(), r.cmds...)
		}
		// Each command holds its own result or error (a failed round trip sets it on all).
		_, _ = pipe.Exec(context.Background())
		for _, r := range batch {
			r.done <- struct{}{}
		}
		clear(batch)
	}
}
