package api

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankstream/rankstream/internal/platform/obs"
)

// coalescer shares identical reads without serving anything older than its request: one read
// per key runs at a time, and the requests for that key that arrive while it runs wait for it
// to end and then share the next read, which starts after all of them arrived. Every answer is
// thus read from Redis after its request came in (exact, unlike the board cache), and a burst
// of identical reads costs one Redis read per round trip instead of one per request. It is the
// "coalesced" cache of rankstream_query_cache_requests_total: hit (shared a read another
// request ran) or miss (ran its own).
type coalescer[V any] struct {
	hits, misses prometheus.Counter

	mu   sync.Mutex
	keys map[string]*flight[V] // the running read of each key
}

// flight is one read: its result once done is closed, and the read that the requests
// arriving meanwhile wait for (nil while none has).
type flight[V any] struct {
	done chan struct{}
	val  V
	err  error
	next *flight[V]
}

func newCoalescer[V any]() *coalescer[V] {
	return &coalescer[V]{keys: map[string]*flight[V]{},
		hits: obs.QueryCache.WithLabelValues("coalesced", "hit"), misses: obs.QueryCache.WithLabelValues("coalesced", "miss")}
}

// do returns read's value for key, read after this call began. read runs with a deadline of
// timeout; it outlives a caller that gives up, since others may share it.
func (c *coalescer[V]) do(ctx context.Context, key string, timeout time.Duration, read func(context.Context) (V, error)) (V, error) {
	c.mu.Lock()
	f := c.keys[key]
	if f == nil {
		f = &flight[V]{done: make(chan struct{})}
		c.keys[key] = f
		c.mu.Unlock()
		c.misses.Inc()
		c.run(ctx, key, f, timeout, read)
		return f.val, f.err
	}
	if f.next == nil {
		f.next = &flight[V]{done: make(chan struct{})}
	}
	n := f.next
	c.mu.Unlock()
	c.hits.Inc()
	select {
	case <-n.done:
		return n.val, n.err
	case <-ctx.Done():
		var zero V
		return zero, fmt.Errorf("api: coalesced read: %w", ctx.Err())
	}
}

// run reads f, then starts the read its waiters share, if any, in a goroutine of its own.
func (c *coalescer[V]) run(ctx context.Context, key string, f *flight[V], timeout time.Duration, read func(context.Context) (V, error)) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	f.val, f.err = read(rctx)
	cancel()
	c.mu.Lock()
	n := f.next
	if n == nil {
		delete(c.keys, key)
	} else {
		c.keys[key] = n
	}
	c.mu.Unlock()
	close(f.done)
	if n != nil {
		go c.run(ctx, key, n, timeout, read)
	}
}
