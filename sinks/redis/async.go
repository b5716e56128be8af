package redis

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankstream/rankstream/internal/platform/backoff"
	"github.com/rankstream/rankstream/internal/platform/obs"
)

// ErrClosed is handed to the done callbacks of updates that could not be written before the
// writer stopped; their records are not committed and will be processed again.
var ErrClosed = errors.New("redis sink: closed before the write succeeded")

// ErrEarlierWriteFailed is handed to the done callbacks of every update submitted after a
// write failed: acknowledging any of them would let the commit's high-water mark cover the
// failed records.
var ErrEarlierWriteFailed = errors.New("redis sink: an earlier write failed, nothing after it is acknowledged")

// FlushOptions shape an asynchronous writer (StepsWriter, ScoresWriter): how long it coalesces
// updates, when it flushes early, when Submit pushes back, and how long it waits between the
// retries of a failed flush; zero fields take the defaults in brackets.
type FlushOptions struct {
	// Interval is how long updates are coalesced by key before a pipelined flush [500 ms].
	Interval time.Duration
	// MaxBatch flushes early once this many distinct keys wait [20,000].
	MaxBatch int
	// MaxPending flushes early and blocks Submit once this many records wait for a flush
	// [20,000]. Every record waiting holds its consumed message and goka's context until
	// its flush is acknowledged (about 0.6 KB), and the flush under way holds as many: the
	// bound keeps the process's memory independent of its rate.
	MaxPending int
	// MaxBackoff caps the wait between retries of a failed flush [5 s].
	MaxBackoff time.Duration
	Logger     *slog.Logger
}

func (o *FlushOptions) defaults() {
	if o.Interval <= 0 {
		o.Interval = 500 * time.Millisecond
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 20_000
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 20_000
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// async returns the layer's options for the writer whose metrics say sink=name; o has its
// defaults already.
func (o FlushOptions) async(name string) asyncOptions {
	return asyncOptions{name: name, interval: o.Interval, maxBatch: o.MaxBatch, maxPending: o.MaxPending,
		maxBackoff: o.MaxBackoff, log: o.Logger}
}

// asyncOptions are what every asynchronous writer's layer needs (FlushOptions.async).
type asyncOptions struct {
	name       string // the metrics' sink label: redis-steps, redis-scores
	interval   time.Duration
	maxBatch   int
	maxPending int
	maxBackoff time.Duration
	log        *slog.Logger
}

// asyncBatch is what one flush writes, coalesced by key, and the callbacks it releases, in
// submission order. Its values live in slabs of slabValues, so that a new key costs no
// allocation of its own, and a written batch is reused (reset) with its room.
type asyncBatch[K comparable, V any] struct {
	items map[K]*V
	dones []func(error)
	slabs [][]V
	used  int // values handed out by alloc
}

// slabValues is the number of values in one slab of an asyncBatch.
const slabValues = 1024

func newAsyncBatch[K comparable, V any]() *asyncBatch[K, V] {
	return &asyncBatch[K, V]{items: make(map[K]*V)}
}

// values yields the batch's values in the order their keys first came: one pass over its
// slabs, in memory order (a flush that reads every value misses the cache far less than in
// the map's order).
func (b *asyncBatch[K, V]) values() iter.Seq[*V] {
	return func(yield func(*V) bool) {
		for i := range b.used {
			if !yield(&b.slabs[i/slabValues][i%slabValues]) {
				return
			}
		}
	}
}

// alloc returns a zero value that stays valid until the batch is reset.
func (b *asyncBatch[K, V]) alloc() *V {
	i, j := b.used/slabValues, b.used%slabValues
	if i == len(b.slabs) {
		b.slabs = append(b.slabs, make([]V, slabValues))
	}
	b.used++
	return &b.slabs[i][j]
}

// reset empties a written batch for reuse, keeping the room its map, callbacks and slabs grew
// to (at most what maxPending records fill: Submit waits beyond).
func (b *asyncBatch[K, V]) reset() {
	clear(b.items)
	clear(b.dones) // the callbacks hold their records
	b.dones = b.dones[:0]
	for i := 0; i*slabValues < b.used; i++ {
		clear(b.slabs[i]) // the values hold strings and slices
	}
	b.used = 0
}

// async is the asynchronous layer of a writer (StepsWriter, ScoresWriter): Submit coalesces
// updates of type U into a batch of pending values V by key K (add, called under the lock),
// Run flushes the batch in one write (write) per interval or when maxBatch keys or maxPending
// records wait, retries a failed flush with backoff for as long as it takes (retried is told of
// each failure, e.g. to reload a script), and only then calls the done callbacks, oldest first.
// Once a flush fails for good, nothing submitted before or after it is ever acknowledged. After
// a flush, the event time of each value it wrote (eventMs, Unix milliseconds; 0 for none; a nil
// eventMs for a writer of no board) is observed in rankstream_board_update_latency_seconds.
type async[K comparable, V, U any] struct {
	opts    asyncOptions
	add     func(b *asyncBatch[K, V], u U)
	write   func(ctx context.Context, b *asyncBatch[K, V]) error
	eventMs func(*V) int64
	retried func(ctx context.Context, err error)

	mu     sync.Mutex
	space  *sync.Cond // signalled when a flush frees room
	cur    *asyncBatch[K, V]
	spare  *asyncBatch[K, V] // a written batch, for take to reuse
	closed bool
	failed error // the first failed write: once set, every done gets an error
	kick   chan struct{}

	// Metrics, resolved once: Submit runs for every record.
	pending  prometheus.Gauge
	writeSec prometheus.Observer
	writeErr prometheus.Counter
	latency  prometheus.Observer
}

func newAsync[K comparable, V, U any](opts asyncOptions, add func(*asyncBatch[K, V], U), write func(context.Context, *asyncBatch[K, V]) error,
	eventMs func(*V) int64) *async[K, V, U] {
	a := &async[K, V, U]{opts: opts, add: add, write: write, eventMs: eventMs, cur: newAsyncBatch[K, V](),
		kick:     make(chan struct{}, 1),
		pending:  obs.SinkPending.WithLabelValues(opts.name),
		writeSec: obs.SinkWriteSeconds.WithLabelValues(opts.name),
		writeErr: obs.SinkWriteErrors.WithLabelValues(opts.name),
		latency:  obs.BoardUpdateLatency.WithLabelValues(opts.name)}
	a.space = sync.NewCond(&a.mu)
	return a
}

// submit queues u and done. It blocks while maxPending records wait.
func (a *async[K, V, U]) submit(u U, done func(error)) {
	a.mu.Lock()
	for len(a.cur.dones) >= a.opts.maxPending && !a.closed {
		a.space.Wait()
	}
	if a.closed {
		err := ErrClosed
		if a.failed != nil {
			err = fmt.Errorf("%w: %w", ErrEarlierWriteFailed, a.failed)
		} else {
			a.failed = fmt.Errorf("redis sink: record submitted after the writer stopped: %w", ErrClosed)
		}
		a.mu.Unlock()
		done(err)
		return
	}
	a.add(a.cur, u)
	a.cur.dones = append(a.cur.dones, done)
	keys, records := len(a.cur.items), len(a.cur.dones)
	a.pending.Set(float64(records))
	a.mu.Unlock()
	// A full batch (maxBatch keys, or maxPending records: the next Submit waits) is flushed
	// as soon as the flush under way, if any, ends: waiting for the interval would hold the
	// processor back with nothing to do.
	if keys >= a.opts.maxBatch || records >= a.opts.maxPending {
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
}

// run flushes every interval (or sooner when a batch is full) until ctx is cancelled, then
// makes one last attempt to flush what is queued. If a flush fails, its records and every
// record submitted after it get an error and run returns it.
func (a *async[K, V, U]) run(ctx context.Context) error {
	t := time.NewTicker(a.opts.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return a.close()
		case <-t.C:
		case <-a.kick:
		}
		if err := a.flush(ctx); err != nil {
			return err
		}
	}
}

// err returns the first failure: a write that failed, or a record submitted after the writer
// stopped.
func (a *async[K, V, U]) err() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.failed
}

func (a *async[K, V, U]) take() *asyncBatch[K, V] {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.cur
	a.cur, a.spare = a.spare, nil
	if a.cur == nil {
		a.cur = newAsyncBatch[K, V]()
	}
	a.space.Broadcast()
	a.pending.Set(0)
	return b
}

// recycle keeps b, written and acknowledged, for take to reuse.
func (a *async[K, V, U]) recycle(b *asyncBatch[K, V]) {
	b.reset()
	a.mu.Lock()
	a.spare = b
	a.mu.Unlock()
}

// flush writes the current batch, retrying until it succeeds or ctx ends; on success it
// releases the batch's callbacks in order. On failure it fails them and everything queued
// after them, closes the writer and returns the error.
func (a *async[K, V, U]) flush(ctx context.Context) error {
	b := a.take()
	if len(b.dones) == 0 {
		a.recycle(b)
		return nil
	}
	if err := a.writeWithRetry(ctx, b); err != nil {
		return a.fail(b, err)
	}
	now := time.Now().UnixMilli()
	for _, done := range b.dones {
		done(nil)
	}
	if a.eventMs != nil {
		for v := range b.values() {
			if ms := a.eventMs(v); ms > 0 {
				a.latency.Observe(float64(now-ms) / 1000)
			}
		}
	}
	a.recycle(b)
	return nil
}

// fail closes the writer after the write of b failed with err: b's callbacks get err, every
// later one ErrEarlierWriteFailed.
func (a *async[K, V, U]) fail(b *asyncBatch[K, V], err error) error {
	a.mu.Lock()
	a.closed = true
	if a.failed == nil {
		a.failed = err
	}
	later := a.cur
	a.cur = newAsyncBatch[K, V]()
	a.space.Broadcast()
	a.pending.Set(0)
	a.mu.Unlock()
	for _, done := range b.dones {
		done(err)
	}
	lost := fmt.Errorf("%w: %w", ErrEarlierWriteFailed, err)
	for _, done := range later.dones {
		done(lost)
	}
	a.opts.log.Error("redis sink: write failed; its records and the later ones stay uncommitted",
		"sink", a.opts.name, "records", len(b.dones)+len(later.dones), "err", err)
	return fmt.Errorf("redis sink: %d records not written: %w", len(b.dones)+len(later.dones), err)
}

func (a *async[K, V, U]) close() error {
	a.mu.Lock()
	a.closed = true
	a.space.Broadcast()
	a.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return a.flush(ctx)
}

func (a *async[K, V, U]) writeWithRetry(ctx context.Context, b *asyncBatch[K, V]) error {
	err := backoff.Retry(ctx, backoff.New(50*time.Millisecond, a.opts.maxBackoff), nil,
		func(attempt int, err error, wait time.Duration) {
			a.writeErr.Inc()
			a.opts.log.Warn("redis sink: flush failed, retrying", "sink", a.opts.name, "attempt", attempt,
				"keys", len(b.items), "records", len(b.dones), "backoff", wait, "err", err)
			if a.retried != nil {
				a.retried(ctx, err)
			}
		},
		func() error {
			start := time.Now()
			if err := a.write(ctx, b); err != nil {
				return err
			}
			a.writeSec.Observe(time.Since(start).Seconds())
			return nil
		})
	if err != nil {
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
	return nil
}
