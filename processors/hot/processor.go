// Package hot is the hot-search pipeline: the goka group that validates search queries,
// repartitions them by normalised term through its loop topic and keeps one sliding-window
// sketch per partition, emitting each partition's partial Top-K when a window closes; and the
// merge group that combines the partitions' partials of a window into the snapshot it
// publishes.
//
// It imports topics, sketch, internal/kafkaconf (partitioning) and processors; never a sink.
package hot

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/internal/kafkaconf"
	"github.com/rankstream/rankstream/processors"
	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/topics"
)

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
	// Idle: an input partition whose watermark has not moved for this long (wall clock) stops
	// holding the windows back [30 s].
	Idle time.Duration
	// Lookahead is how far ahead of the closing window events are kept [5 min]: input
	// partitions read at different speeds (a backlog, a replay) run ahead of the slowest one.
	Lookahead time.Duration
	K         int // items per snapshot [100]
	// MergeWait is how long (wall clock, from its first partial reaching the merge) a window
	// waits for its missing partitions before it is published without them [10 s].
	MergeWait time.Duration
	Log       *slog.Logger
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
		c.Lookahead = 5 * time.Minute
	}
	if c.K <= 0 {
		c.K = 100
	}
	if c.MergeWait <= 0 {
		c.MergeWait = 10 * time.Second
	}
	if c.Partitions <= 0 {
		c.Partitions = topics.DefaultPartitions
	}
}

// Partial is one partition's Top-K of one window (topic hot.partials, key = window end ms).
type Partial struct {
	Partition   int32         `json:"partition"`
	WindowStart int64         `json:"window_start_ms"`
	WindowEnd   int64         `json:"window_end_ms"`
	Items       []sketch.Item `json:"items"`
}

// inputState is what one input partition's callbacks remember.
type inputState struct {
	maxMs    int64
	markedMs int64 // watermark of the last markers sent
}

// windowState is one loop partition's window.
type windowState struct {
	win      *sketch.Window
	seen     map[int32]int64     // input partition → the next input offset not yet counted
	marks    map[int32]int64     // input partition → watermark
	markedAt map[int32]time.Time // input partition → when its watermark last moved
	endMs    int64               // end of the last window emitted (0: none yet)
	created  time.Time           // when this partition's window was made (wall clock)
}

type processor struct {
	cfg        Config
	dlq        goka.Stream
	partials   goka.Stream
	markerKeys []string
	slideMs    int64
	mu         sync.Mutex // guards the maps below; each partition's state is used by its own goroutine only
	inputs     map[int32]*inputState
	windows    map[int32]*windowState
}

// Graph returns the hot group's graph.
func Graph(cfg Config) *goka.GroupGraph {
	p := newProcessor(cfg)
	return goka.DefineGroup(cfg.Names.Group(topics.HotGroup),
		goka.Input(cfg.Names.Stream(topics.SearchQueries), topics.Raw{}, p.route),
		goka.Loop(topics.Raw{}, p.count),
		goka.Output(p.dlq, topics.Raw{}),
		goka.Output(p.partials, partialCodec{}),
	)
}

func newProcessor(cfg Config) *processor {
	cfg.defaults()
	p := &processor{
		cfg: cfg, dlq: cfg.Names.Stream(topics.DLQ), partials: cfg.Names.Stream(topics.HotPartials),
		slideMs: cfg.Slide.Milliseconds(), inputs: map[int32]*inputState{}, windows: map[int32]*windowState{},
	}
	p.markerKeys = markerKeys(cfg.Partitions)
	return p
}

// markerKeys finds, for every partition, a key that Kafka's partitioner puts there.
func markerKeys(n int) []string {
	keys := make([]string, n)
	found := 0
	for i := 0; found < n; i++ {
		k := "\x00watermark-" + strconv.Itoa(i)
		if q := kafkaconf.PartitionOf(k, n); keys[q] == "" {
			keys[q] = k
			found++
		}
	}
	return keys
}

// Run runs the hot group until ctx ends.
func Run(ctx context.Context, cfg Config, brokers []string, opts ...goka.ProcessorOption) error {
	proc, err := goka.NewProcessor(brokers, Graph(cfg), opts...)
	if err != nil {
		return fmt.Errorf("hot processor: %w", err)
	}
	if err := proc.Run(ctx); err != nil {
		return fmt.Errorf("hot processor: %w", err)
	}
	return nil
}

// route validates a query, sends its term to the term's partition, and, whenever the window
// end this input partition allows moves, a watermark marker to every partition.
func (p *processor) route(ctx goka.Context, msg any) {
	value, _ := msg.([]byte)
	q, term, err := topics.DecodeSearchQuery(value)
	if err != nil {
		processors.DeadLetter(ctx, p.dlq, value, err)
		return
	}
	ms := q.TS.UnixMilli()
	ctx.Loopback(term, loopRecord{kind: kindTerm, ms: ms, partition: ctx.Partition(), offset: ctx.Offset()}.encode())

	in := p.input(ctx.Partition(), ms)
	in.maxMs = max(in.maxMs, ms)
	// A marker whenever the window end this partition allows (newest event less the lateness,
	// rounded down to the slide) moves: the windows it closes close at once.
	late := p.cfg.Lateness.Milliseconds()
	send := (in.maxMs-late)/p.slideMs > (in.markedMs-late)/p.slideMs || in.markedMs < 0
	if send {
		in.markedMs = in.maxMs
	}
	if send {
		marker := loopRecord{kind: kindMarker, ms: in.maxMs, partition: ctx.Partition()}.encode()
		for _, k := range p.markerKeys {
			ctx.Loopback(k, marker)
		}
	}
}

// count adds a term to its partition's window, or takes a marker and closes the windows the
// partition's watermark has passed, emitting their partial Top-K.
func (p *processor) count(ctx goka.Context, msg any) {
	value, _ := msg.([]byte)
	r, err := decodeRecord(value)
	if err != nil {
		processors.DeadLetter(ctx, p.dlq, value, err)
		return
	}
	w, err := p.window(ctx.Partition())
	if err != nil {
		ctx.Fail(err)
		return
	}
	switch r.kind {
	case kindTerm:
		if r.offset < w.seen[r.partition] {
			return // a copy written again by a replay of the input
		}
		w.seen[r.partition] = r.offset + 1
		w.win.Add(ctx.Key(), time.UnixMilli(r.ms))
	case kindMarker:
		if r.ms > w.marks[r.partition] {
			w.marks[r.partition] = r.ms
			w.markedAt[r.partition] = time.Now()
		}
		p.close(ctx, w)
	}
}

// input returns an input partition's state. Only that partition's goroutine uses it; the
// lock guards the map.
func (p *processor) input(partition int32, ms int64) *inputState {
	p.mu.Lock()
	defer p.mu.Unlock()
	in := p.inputs[partition]
	if in == nil {
		in = &inputState{maxMs: ms, markedMs: -1}
		p.inputs[partition] = in
	}
	return in
}

// window returns a loop partition's window. Only that partition's goroutine uses it; the
// lock guards the map.
func (p *processor) window(partition int32) (*windowState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.windows[partition]; w != nil {
		return w, nil
	}
	win, err := sketch.New(sketch.WithWindow(p.cfg.Window), sketch.WithSlide(p.cfg.Slide), sketch.WithK(p.cfg.K),
		sketch.WithLookahead(p.cfg.Lookahead))
	if err != nil {
		return nil, fmt.Errorf("hot processor: %w", err)
	}
	w := &windowState{win: win, seen: map[int32]int64{}, marks: map[int32]int64{}, markedAt: map[int32]time.Time{}, created: time.Now()}
	p.windows[partition] = w
	return w, nil
}

// close emits the partial Top-K of every window whose end the watermark passed: the smallest
// watermark over the input partitions, less the lateness. An input partition not heard from
// for Idle (wall clock) is left out, so a partition without traffic does not stall the output.
func (p *processor) close(ctx goka.Context, w *windowState) {
	low := int64(-1)
	now := time.Now()
	for part := range int32(p.cfg.Partitions) {
		ms, ok := w.marks[part]
		if !ok {
			if now.Sub(w.created) < p.cfg.Idle {
				return // an input partition not heard from yet may still hold this window's events
			}
			continue
		}
		if now.Sub(w.markedAt[part]) > p.cfg.Idle {
			continue // idle: it no longer holds the windows back
		}
		if low < 0 || ms < low {
			low = ms
		}
	}
	if low < 0 {
		return
	}
	target := (low - p.cfg.Lateness.Milliseconds()) / p.slideMs * p.slideMs
	if w.endMs == 0 {
		w.endMs = target - p.slideMs // the first window to emit ends at target
	}
	for end := w.endMs + p.slideMs; end <= target; end += p.slideMs {
		w.endMs = end
		w.win.Advance(time.UnixMilli(end))
		start, winEnd := w.win.Bounds()
		if winEnd.UnixMilli() != end {
			// The sketch's window already ends later: its first event came after this end (a
			// window never moves back). This partition cannot describe the window, so the
			// merge leaves it unpublished, the same way on every run.
			continue
		}
		ctx.Emit(p.partials, strconv.FormatInt(end, 10), &Partial{
			Partition: ctx.Partition(), WindowStart: start.UnixMilli(), WindowEnd: end, Items: w.win.TopK(),
		})
	}
}
