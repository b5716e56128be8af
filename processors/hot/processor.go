// Package hot is the goka group hot: it validates search queries, repartitions them by
// normalised term through its loop topic and keeps one sliding-window sketch per partition,
// emitting each partition's partial Top-K (topics.HotPartial) to hot.partials when a window
// closes; processors/hot/merge merges them. Its rules (watermarks, alignment, which terms count)
// are pure functions (rules.go); its state survives restarts in hot.checkpoints. The loop
// topic's records and the checkpoints are topics.HotLoopRecord and topics.HotCheckpoint; this
// package only reads and writes them.
//
// It imports topics, sketch and internal plumbing (kafka: partitioning, processor start-up,
// the process's Kafka client; obs); never a sink or another processor family.
package hot

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lovoo/goka"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/topics"
)

// Group is the hot group's logical name; its loop topic repartitions queries by term.
const Group = topics.HotGroup

// Config shapes the pipeline; zero durations and sizes take the defaults in brackets.
type Config struct {
	Names topics.Names
	// Partitions of the co-partitioned topics (every partition must report each window).
	Partitions int
	Window     time.Duration // [1 h]
	Slide      time.Duration // [5 s]
	// Lateness is how far behind the slowest input partition's newest event a window closes
	// [2 s]: events later than that are dropped and counted by the sketch.
	Lateness time.Duration
	// Idle: an input partition that had nothing left to read (its end offset reached, every
	// query forwarded) for this long (wall clock) stops holding the windows back, until it
	// has data again [30 s]. A partition with data not yet read holds them back however long
	// its consumer lags or is dead (see idle.go).
	Idle time.Duration
	// Lookahead is how far ahead of the closing window the sketch keeps events [10 min]. Input
	// partitions read at different speeds (a backlog, a replay) run ahead of the slowest one:
	// one that gets more than four fifths of it ahead waits (watermark alignment), so that no
	// event is dropped for being early.
	Lookahead time.Duration
	K         int // items per snapshot [100]
	// Checkpoint is how often (wall clock) each partition stores its window state [5 s]. After a
	// crash or a rebalance the state is the last checkpoint plus the loop records after it.
	Checkpoint time.Duration
	Log        *slog.Logger
}

// DefaultConfig returns a Config holding the defaults in brackets above.
func DefaultConfig() Config {
	var c Config
	c.defaults()
	return c
}

func (c *Config) defaults() {
	if c.Window <= 0 {
		c.Window = time.Hour
	}
	if c.Slide <= 0 {
		c.Slide = 5 * time.Second
	}
	if c.Lateness <= 0 {
		c.Lateness = 2 * time.Second
	}
	if c.Idle <= 0 {
		c.Idle = 30 * time.Second
	}
	if c.Lookahead <= 0 {
		c.Lookahead = 10 * time.Minute
	}
	if c.K <= 0 {
		c.K = 100
	}
	if c.Checkpoint <= 0 {
		c.Checkpoint = 5 * time.Second
	}
	if c.Partitions <= 0 {
		c.Partitions = topics.DefaultPartitions
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
}

// inputState is what one input partition's callbacks remember.
type inputState struct {
	maxMs    int64
	markedMs int64 // watermark of the last markers sent
	// live is whether the partition reads at the head of its log, as the idle watcher last
	// found (idle.go); liveSent what the last markers sent said of it.
	live     atomic.Bool
	liveSent bool
	// buf holds its terms on their way to the loop topic, in the current goka session; the
	// idle watcher (idle.go) reads it too, and mu orders a new session's buffer with the
	// watcher's idle markers.
	buf     atomic.Pointer[loopBuffer]
	mu      sync.Mutex
	session context.Context
	win     *windowState // the state of the loop partition of the same number (align), if of session
}

// windowState is one loop partition's window.
type windowState struct {
	view
	win     *sketch.Window
	seen    map[int32]int64      // input partition → the next input offset not yet counted
	dropped uint64               // events dropped since the last window emitted
	held    []topics.HotHeldTerm // terms beyond the sketch's reach, in arrival order (see hold)
	// before counts, until the first window is emitted, the terms each input partition put in
	// the sketch, by slide (event time / slide): the first window's move tells their fates
	// (firstMove).
	before     map[int32]map[int64]uint64
	loopOffset int64           // the last loop record applied (-1: none)
	admitBelow int64           // events before it may be routed while the view stays as it is (align)
	saved      time.Time       // when it was last checkpointed
	session    context.Context // the goka partition session it belongs to
	partials   inflight        // its partials on their way to Kafka
	// For the input partitions of the process routing to it (reachable), from any goroutine:
	reach   atomic.Int64   // the event time from which a term is held (win's end + lookahead)
	applied []atomic.Int64 // by input partition, the watermark of its last marker applied
	rested  []atomic.Bool  // by input partition, whether its latest word applied was an idle marker
}

type processor struct {
	cfg         Config
	dlq         goka.Stream
	partials    string
	checkpoints string
	loop        string
	io          kafkaStore
	markerKeys  []string
	shape       topics.HotShape
	rules       rules
	drops       *dropLog
	loopMetrics *loopMetrics
	in          prometheus.Counter // queries consumed (rankstream_events_in_total)
	inputs      []*inputState      // by input partition, each used by its partition's goroutine only
	mu          sync.Mutex         // guards windows; each partition's state is used by its own goroutine only
	windows     map[int32]*windowState
	local       []atomic.Pointer[windowState] // by loop partition, its state if this process holds it (reachable)
	owned       assignment                    // the partitions goka assigned to this process (idle.go)
}

func newProcessor(cfg Config, io kafkaStore) *processor {
	cfg.defaults()
	obs.HotSlide.Set(cfg.Slide.Seconds())
	p := &processor{
		cfg: cfg, dlq: cfg.Names.Stream(topics.DLQ), io: io,
		in:          obs.EventsIn(string(cfg.Names.Group(Group)), string(cfg.Names.Stream(topics.SearchQueries))),
		partials:    string(cfg.Names.Stream(topics.HotPartials)),
		checkpoints: string(cfg.Names.Stream(topics.HotCheckpoints)),
		loop:        string(cfg.Names.Loop(Group)),
		inputs:      make([]*inputState, cfg.Partitions), windows: map[int32]*windowState{},
		shape: topics.HotShape{WindowMs: cfg.Window.Milliseconds(), SlideMs: cfg.Slide.Milliseconds(),
			LookaheadMs: cfg.Lookahead.Milliseconds(), K: int64(cfg.K)},
		rules: newRules(cfg), drops: newDropLog(cfg.Log), loopMetrics: newLoopMetrics(),
		local: make([]atomic.Pointer[windowState], cfg.Partitions),
	}
	p.markerKeys = markerKeys(cfg.Partitions)
	for part := range p.inputs {
		p.inputs[part] = &inputState{maxMs: math.MinInt64, markedMs: -1}
	}
	return p
}

// graph returns the hot group's graph. Partials and checkpoints are not goka outputs: they are
// written with the process's client (kafkaIO), and a checkpoint waits for the partials emitted
// before it, so that it never covers a partial still in flight.
func (p *processor) graph() *goka.GroupGraph {
	return goka.DefineGroup(p.cfg.Names.Group(Group),
		goka.Input(p.cfg.Names.Stream(topics.SearchQueries), topics.Raw{}, p.route),
		goka.Loop(topics.Raw{}, p.count),
		goka.Output(p.dlq, topics.Raw{}),
	)
}

// markerKeys finds, for every partition, a key that Kafka's partitioner puts there.
func markerKeys(n int) []string {
	keys := make([]string, n)
	found := 0
	for i := 0; found < n; i++ {
		k := "\x00watermark-" + strconv.Itoa(i)
		if q := kafka.PartitionOf(k, n); keys[q] == "" {
			keys[q] = k
			found++
		}
	}
	return keys
}

// Run runs the hot group until ctx ends on cl's cluster (its brokers; opts are the goka
// processor's options, kafka.Config.ProcessorOptions, whose offset-ordered commits the input's
// commits rely on: see loopBuffer). Partials and checkpoints are written,
// and checkpoints and loop records read back, through cl, the process's Kafka client, which
// the caller closes after Run returned.
func Run(ctx context.Context, cfg Config, cl *kafka.Client, opts ...goka.ProcessorOption) error {
	p := newProcessor(cfg, &kafkaIO{cl: cl, ctx: context.WithoutCancel(ctx)})
	proc, err := goka.NewProcessor(cl.Config().Brokers, p.graph(), append(opts, goka.WithRebalanceCallback(p.owned.set))...)
	if err == nil {
		err = kafka.Run(ctx, proc, p.graph().Group(), p.cfg.Log, p.watchIdle)
	}
	if err != nil {
		return fmt.Errorf("hot processor: %w", err)
	}
	return nil
}

// route validates a query, buffers its term for the term's partition (loopBuffer: the input
// record is committed once the term is in the loop topic), and, whenever the window end this
// input partition allows moves, sends a watermark marker to every partition. An input
// partition that runs too far ahead of the slowest one waits first (align).
func (p *processor) route(ctx goka.Context, msg any) {
	p.in.Inc()
	value, _ := msg.([]byte)
	term, ts, err := topics.DecodeSearchTerm(ctx.Key(), value, ctx.Timestamp())
	if err != nil {
		kafka.DeadLetter(ctx, p.dlq, value, err)
		// Committed in order with the terms buffered before it.
		p.input(ctx).buf.Load().add(0, "", 0, ctx.Offset(), ctx.DeferCommit)
		return
	}
	ms := ts.UnixMilli()
	in := p.input(ctx)
	buf := in.buf.Load()
	in.maxMs = max(in.maxMs, ms)
	// A marker whenever the window end this partition allows (newest event less the lateness,
	// rounded down to the slide) moves: the windows it closes close at once. It goes after the
	// terms buffered before (which it would otherwise make late) and before this term: a
	// partition's first marker then reaches every loop partition before any of its terms, and
	// the marker closes no window the term belongs to (the term is not later than the marker's
	// event time, and windows close a lateness behind it).
	// A marker also goes when the partition starts or stops reading at the head of its log.
	late, live := p.cfg.Lateness.Milliseconds(), in.live.Load()
	if slide := p.shape.SlideMs; in.markedMs < 0 || (in.maxMs-late)/slide > (in.markedMs-late)/slide || live != in.liveSent {
		in.markedMs, in.liveSent = in.maxMs, live
		buf.flush(flushMarker, buf.markers(topics.HotLoopRecord{Kind: topics.HotLoopMarker, Ms: in.maxMs, Partition: ctx.Partition(), Live: live})...)
	}
	if err := p.align(ctx, in, ms); err != nil && ctx.Context().Err() == nil {
		ctx.Fail(err)
	}
	to := kafka.PartitionOf(term, p.cfg.Partitions)
	if err := p.reachable(ctx.Context(), in.win, ctx.Partition(), to, ms); err != nil && ctx.Context().Err() == nil {
		ctx.Fail(err)
	}
	// Taken away (rebalance, shutdown) while it waited, the term goes now (the buffer, closed,
	// flushes it at once): its commit must not skip it, and a loop partition holds a term
	// beyond the sketch's reach until the window gets there (windowState.held).
	buf.add(to, term, ms, ctx.Offset(), ctx.DeferCommit)
}

// count applies a loop record to its partition's window: its terms are counted, a marker moves
// its input partition's watermark and closes the windows that passed. Every Checkpoint the
// state is stored; after a restart the records it covers are skipped.
func (p *processor) count(ctx goka.Context, msg any) {
	value, _ := msg.([]byte)
	r, err := topics.DecodeHotLoopRecord(value)
	if err != nil {
		kafka.DeadLetter(ctx, p.dlq, value, err)
		return
	}
	q := ctx.Partition()
	w, err := p.window(ctx.Context(), q)
	if err == nil {
		err = p.countRecord(ctx.Context(), w, q, ctx.Offset(), ctx.Key(), r)
	}
	if err != nil && ctx.Context().Err() == nil {
		ctx.Fail(err)
	}
	// The session ended (revoked, stopping) while this record waited on Kafka: its commit is
	// harmless, the next owner rebuilds the state from the checkpoint and the loop records.
}

// countRecord applies the loop record r at offset of partition q to w, after the records
// before it that w lacks (a restart: the checkpoint is older), unless w already covers it (a
// read ahead while q's input waited), and checkpoints w when due.
func (p *processor) countRecord(ctx context.Context, w *windowState, q int32, offset int64, key string, r topics.HotLoopRecord) error {
	if from, to, ok := catchUp(w.loopOffset, offset); ok {
		p.cfg.Log.Info("hot: catching up from the loop topic", "partition", q, "from", from, "to", to)
		if err := p.catchUp(ctx, w, q, to); err != nil {
			return err
		}
	}
	if offset > w.loopOffset {
		if err := p.apply(ctx, w, q, key, r); err != nil {
			return err
		}
		w.loopOffset = offset
	}
	return p.saveIfDue(ctx, q, w)
}

// apply applies one loop record to a window.
func (p *processor) apply(ctx context.Context, w *windowState, partition int32, key string, r topics.HotLoopRecord) error {
	switch r.Kind {
	case topics.HotLoopTerms:
		w.heard(r.Partition)
		next := w.seen[r.Partition]
		for _, t := range r.Terms {
			next = p.term(w, partition, r.Partition, next, t)
		}
		w.seen[r.Partition] = next
	case topics.HotLoopTerm: // written by an older version
		w.heard(r.Partition)
		w.seen[r.Partition] = p.term(w, partition, r.Partition, w.seen[r.Partition], topics.HotLoopEntry{Term: key, Ms: r.Ms, Offset: r.Offset})
	case topics.HotLoopMarker:
		if _, end := w.win.Bounds(); end.IsZero() {
			// The partition's first record: a marker (see route). The window starts here, so
			// it can describe every window from the first one emitted (close) on.
			w.win.Advance(time.UnixMilli(r.Ms))
			_, started := w.win.Bounds()
			w.started = started.UnixMilli()
		}
		w.mark(r.Partition, r.Ms)
		w.reads(r.Partition, r.Live)
		w.admitBelow = math.MinInt64
		err := p.close(ctx, partition, w)
		w.advanced(p.shape.LookaheadMs)
		return err
	case topics.HotLoopIdle:
		w.rest(r.Partition)
		w.admitBelow = math.MinInt64
		err := p.close(ctx, partition, w)
		w.advanced(p.shape.LookaheadMs)
		return err
	}
	return nil
}

// heard ends the idleness of input partition part, whose term came: it holds the windows back
// again. (Its instance sends a marker before the first term after an idle marker; this covers
// a term that comes without one.)
func (w *windowState) heard(part int32) {
	if w.idle[part] {
		delete(w.idle, part)
		w.admitBelow = math.MinInt64
	}
}

// term counts a term of loop partition q from input partition part, or drops it, unless it is
// a copy: next is the next input offset of part not yet counted; term returns the next one
// after it.
func (p *processor) term(w *windowState, q, part int32, next int64, t topics.HotLoopEntry) int64 {
	switch termFate(next, w.endMs, t.Ms, t.Offset) {
	case fateDuplicate:
		return next
	case fateLate:
		p.drop(w, q, reasonLate, 1)
		return t.Offset + 1
	}
	if _, end := w.win.Bounds(); !end.IsZero() && t.Ms >= end.UnixMilli()+p.shape.LookaheadMs {
		// Cloned: the term shares its memory with the rest of its loop record.
		p.hold(w, q, topics.HotHeldTerm{Ms: t.Ms, Term: strings.Clone(t.Term)})
		return t.Offset + 1
	}
	if p.add(w, q, t.Term, t.Ms) && w.endMs == 0 {
		w.countBefore(part, t.Ms/p.shape.SlideMs)
	}
	return t.Offset + 1
}

// countBefore counts, before the first window, a term input partition part put in the sketch
// at the slide slot.
func (w *windowState) countBefore(part int32, slot int64) {
	slots := w.before[part]
	if slots == nil {
		slots = map[int64]uint64{}
		w.before[part] = slots
	}
	slots[slot]++
}

// input returns the state of ctx's input partition, with a loop buffer of ctx's goka session.
// Only that partition's goroutine uses it, but for its buffer, which the idle watcher reads.
func (p *processor) input(ctx goka.Context) *inputState {
	partition := ctx.Partition()
	in := p.inputs[partition]
	if session := ctx.Context(); in.session != session {
		// The previous session's buffer, if any, flushed itself when it ended.
		buf := newLoopBuffer(p.io.producerContext(), p.io.produceAsync, p.loop, p.markerKeys, partition, p.loopMetrics)
		in.mu.Lock()
		in.buf.Store(buf)
		in.mu.Unlock()
		in.session = session
		// A session's first query sends a marker: it ends an idleness the watcher declared
		// between the sessions (idle.go), in every loop partition, before its term.
		in.markedMs = -1
		go buf.run(session)
	}
	return in
}

// window returns loop partition q's state for the current goka session (ctx), restoring it
// from q's last checkpoint on the session's first use. Only q's goroutine (its input and its
// loop records) uses it; the lock guards the map.
func (p *processor) window(ctx context.Context, q int32) (*windowState, error) {
	p.mu.Lock()
	w := p.windows[q]
	p.mu.Unlock()
	if w != nil && w.session.Err() == nil {
		return w, nil
	}
	w, err := p.restore(ctx, q)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.windows[q] = w
	p.mu.Unlock()
	p.local[q].Store(w)
	context.AfterFunc(w.session, func() { // revoked or stopped: free the state
		p.local[q].CompareAndSwap(w, nil)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.windows[q] == w {
			delete(p.windows, q)
		}
	})
	return w, nil
}

// newWindowState returns an empty state of a loop partition for the session ctx, with a
// window of the configured shape.
func (p *processor) newWindowState(ctx context.Context, now time.Time) (*windowState, error) {
	win, err := sketch.New(sketch.WithWindow(p.cfg.Window), sketch.WithSlide(p.cfg.Slide), sketch.WithK(p.cfg.K),
		sketch.WithLookahead(p.cfg.Lookahead))
	if err != nil {
		return nil, fmt.Errorf("hot processor: %w", err)
	}
	return newWindowState(ctx, win, p.cfg.Partitions, now), nil
}

// restore builds partition q's state from its last checkpoint: the state after the loop
// record at w.loopOffset (catchUp reads the records after it).
func (p *processor) restore(ctx context.Context, q int32) (*windowState, error) {
	now := time.Now()
	w, err := p.newWindowState(ctx, now)
	if err != nil {
		return nil, err
	}
	rec, err := p.io.latest(ctx, p.checkpoints, q)
	if err != nil || rec == nil || rec.Value == nil { // nil: none yet, or cleared by Replay
		return w, err
	}
	cp, err := topics.DecodeHotCheckpoint(rec.Value)
	if err == nil && cp.Shape == p.shape {
		err = w.win.UnmarshalBinary(cp.Window)
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("hot processor: checkpoint of partition %d at offset %d: %w", q, rec.Offset, err)
	case cp.Shape != p.shape:
		p.cfg.Log.Warn("hot: checkpoint made with another window shape; rebuilding from the loop topic",
			"partition", q, "checkpoint", cp.Shape, "configured", p.shape)
	default:
		w.loopOffset, w.endMs, w.dropped, w.held, w.seen, w.marks, w.first = cp.LoopOffset, cp.EndMs, cp.Dropped, cp.Held, cp.Seen, cp.Marks, cp.First
		if _, end := w.win.Bounds(); w.endMs == 0 && !end.IsZero() {
			w.started = end.UnixMilli() // no window emitted: the window ends where it started
		}
		for _, part := range cp.Idle {
			w.rest(part)
		}
		for _, part := range cp.Live {
			w.reads(part, true)
		}
		p.cfg.Log.Info("hot: restored from checkpoint", "partition", q, "loop_offset", cp.LoopOffset, "window_end", time.UnixMilli(cp.EndMs).UTC())
		w.advanced(p.shape.LookaheadMs)
	}
	return w, nil
}

// catchUp applies partition q's loop records after w.loopOffset and before offset to.
func (p *processor) catchUp(ctx context.Context, w *windowState, q int32, to int64) error {
	began, applied := time.Now(), 0
	err := p.io.read(ctx, p.loop, q, w.loopOffset+1, to, func(rec *kgo.Record) error {
		w.loopOffset = rec.Offset
		r, err := topics.DecodeHotLoopRecord(rec.Value)
		if err != nil {
			return nil // dead-lettered when goka delivers it
		}
		applied++
		if err := p.apply(ctx, w, q, string(rec.Key), r); err != nil {
			return err
		}
		return p.saveIfDue(ctx, q, w) // a long catch-up (a replay re-reads the whole loop) checkpoints as it goes
	})
	p.cfg.Log.Debug("hot: caught up", "partition", q, "records", applied, "took", time.Since(began).Round(time.Millisecond))
	return err
}

// saveIfDue stores partition q's state as its checkpoint when the last one is Checkpoint old,
// once every partial emitted before is stored: after a crash the partials the checkpoint does
// not cover are emitted again from the loop records after it.
func (p *processor) saveIfDue(ctx context.Context, q int32, w *windowState) error {
	if time.Since(w.saved) < p.cfg.Checkpoint || w.endMs == 0 {
		// Before the first window, no checkpoint: a restart applies the loop from its start
		// again, and so counts w.before again (firstMove).
		return nil
	}
	if err := w.partials.wait(ctx); err != nil {
		return fmt.Errorf("hot processor: partials of partition %d: %w", q, err)
	}
	win, err := w.win.MarshalBinary()
	if err != nil {
		return fmt.Errorf("hot processor: checkpoint of partition %d: %w", q, err)
	}
	cp := topics.HotCheckpoint{LoopOffset: w.loopOffset, EndMs: w.endMs, Dropped: w.dropped, Held: w.held, Shape: p.shape, Seen: w.seen, Marks: w.marks, First: w.first,
		Idle: slices.Sorted(maps.Keys(w.idle)), Live: slices.Sorted(maps.Keys(w.live)), Window: win}
	if err := p.io.produce(ctx, &kgo.Record{Topic: p.checkpoints, Key: []byte(p.markerKeys[q]), Value: cp.Encode()}); err != nil {
		return err
	}
	w.saved = time.Now()
	return nil
}

// close emits the partial Top-K of every window whose end the watermark passed (rules.low,
// rules.target, rules.closing), from the first window (rules.firstEnd) on. An input partition
// whose latest word is an idle marker, or that is behind the windows (rules.behind), is left
// out, so a partition without data, or whose data all comes too late, does not stall the
// output. The partials go to Kafka without waiting (inflight): the partition's goroutine goes
// on counting meanwhile, and the next checkpoint waits for them.
func (p *processor) close(ctx context.Context, partition int32, w *windowState) error {
	low, held := p.rules.low(w.view)
	if held || low < 0 {
		return nil
	}
	ends := p.rules.closing(p.rules.floor(w.view), p.rules.target(low))
	if len(ends) == 0 {
		return nil
	}
	for _, end := range ends {
		if w.endMs == 0 {
			p.firstMove(w, partition, end)
		} else {
			w.win.Advance(time.UnixMilli(end))
		}
		w.endMs = end
		if len(w.held) > 0 {
			p.release(w, partition)
		}
		value, err := topics.HotPartialCodec{}.Encode(&topics.HotPartial{
			Partition: partition, WindowStart: end - p.shape.WindowMs, WindowEnd: end, Items: topics.PartialItems(w.win.TopK()), Dropped: w.dropped,
		})
		if err != nil {
			return err
		}
		w.dropped = 0
		w.partials.add()
		p.io.produceAsync(ctx, &kgo.Record{Topic: p.partials, Key: strconv.AppendInt(nil, end, 10), Value: value}, w.partials.done)
	}
	return w.partials.failed()
}

// firstMove moves w's window to end, the first window's, which expires the terms the sketch
// held from before that window's start. Those of an input partition that holds the windows
// back (rules.holds) are dated before the output begins: the first window begins once every
// input partition has begun, so a partition's queries older than the others' first ones by
// more than the window are in no window; they are counted in rankstream_hot_unwindowed_total
// and logged. The others, of a partition left out as behind or idle, are late drops, as they
// would be after the first window.
func (p *processor) firstMove(w *windowState, partition int32, end int64) {
	unwindowed := p.rules.unwindowed(w.view, w.before, end)
	held := w.win.Stats()
	w.win.Advance(time.UnixMilli(end))
	kept := w.win.Stats()
	expired := held.Events + held.Pending - kept.Events - kept.Pending
	w.before = nil
	p.drop(w, partition, reasonLate, expired-min(unwindowed, expired))
	if unwindowed > 0 {
		p.drops.unwindowed.Add(float64(unwindowed))
		p.cfg.Log.Info("hot: search queries dated before the first window, in none",
			"partition", partition, "queries", unwindowed, "window_start", time.UnixMilli(end-p.shape.WindowMs).UTC())
	}
}
