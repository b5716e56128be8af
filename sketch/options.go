package sketch

import (
	"fmt"
	"math"
	"time"
)

// LatePolicy says what Add does with an event older than the window's start.
type LatePolicy uint8

const (
	// LateDrop drops late events and counts them in Stats.DroppedLate.
	LateDrop LatePolicy = iota
	// LateOldest counts late events into the oldest slot of the window, so
	// they leave the window at the next slide.
	LateOldest
)

// String returns "drop" or "oldest".
func (p LatePolicy) String() string {
	switch p {
	case LateDrop:
		return "drop"
	case LateOldest:
		return "oldest"
	}
	return fmt.Sprintf("LatePolicy(%d)", uint8(p))
}

// Defaults of the options; see the package documentation for how to size a
// window for a target error.
const (
	DefaultWidth      = 8192
	DefaultDepth      = 4
	DefaultK          = 100
	DefaultCandidates = 512
	DefaultWindow     = time.Hour
	DefaultSlide      = 5 * time.Second
	DefaultLookahead  = time.Minute
	DefaultBlocks     = 12
	DefaultLatePolicy = LateDrop
)

// Limits checked by New and UnmarshalBinary.
const (
	maxWidth      = 1 << 24
	maxDepth      = 16
	maxK          = 1 << 16
	maxCandidates = 1 << 20
	maxSlots      = 1 << 20
	maxSpan       = 100 * 365 * 24 * time.Hour // window + lookahead
	// MaxSizeBytes is the largest SizeBytes (without item strings) a
	// configuration may ask for.
	MaxSizeBytes = 1 << 30
)

// Option configures a Window built by New.
type Option func(*config)

// WithWidth sets the number of counters in each row of the Count-Min Sketch,
// overriding the default 8192. The sketch's error is about e/width times the
// number of events in the window (see the package documentation).
func WithWidth(width int) Option { return func(c *config) { c.width = width } }

// WithDepth sets the number of rows (hash functions) of the Count-Min Sketch,
// overriding the default 4. The sketch's error bound holds with probability
// 1 − e^−depth.
func WithDepth(depth int) Option { return func(c *config) { c.depth = depth } }

// WithK sets how many items TopK returns at most, overriding the default 100.
func WithK(k int) Option { return func(c *config) { c.k = k } }

// WithCandidates sets how many candidate items are counted exactly besides the
// sketch, overriding the default 512. It must be at least K. Each candidate
// costs 4 bytes per slot of the window.
func WithCandidates(n int) Option { return func(c *config) { c.candidates = n } }

// WithWindow sets the window's length, overriding the default 1 hour. It
// must be a multiple of the slide.
func WithWindow(d time.Duration) Option { return func(c *config) { c.window = d } }

// WithSlide sets how far the window moves at each step, overriding the
// default 5 seconds. Event times are counted in slots of this length.
func WithSlide(d time.Duration) Option { return func(c *config) { c.slide = d } }

// WithLookahead sets how far ahead of the window's end (the watermark)
// events are still accepted, overriding the default of 1 minute rounded up
// to a multiple of the slide. Such events
// are kept for the windows to come; events further ahead are dropped and
// counted in Stats.DroppedEarly. It must be a multiple of the slide and at
// least one slide, and should cover the lag of the watermark behind the
// event times.
func WithLookahead(d time.Duration) Option {
	return func(c *config) { c.lookahead, c.autoLookahead = d, false }
}

// WithBlocks sets into how many blocks the window's sketch is divided,
// overriding the default of 12, or one per slot for windows of fewer slots.
// The sketch forgets events a whole block at a
// time, so its estimates may include up to one block of events that already
// left the window (candidates' counts are exact per slot regardless). More
// blocks make the sketch forget sooner and cost one sketch each.
func WithBlocks(n int) Option { return func(c *config) { c.blocks, c.autoBlocks = n, false } }

// WithLatePolicy sets what happens to events older than the window's start,
// overriding the default LateDrop.
func WithLatePolicy(p LatePolicy) Option { return func(c *config) { c.late = p } }

// config is the shape of a Window. Two windows can be merged when their
// configs are equal.
type config struct {
	width, depth  int
	k, candidates int
	window, slide time.Duration
	lookahead     time.Duration
	blocks        int
	late          LatePolicy
	// Set while the lookahead and blocks are the defaults, which depend on
	// the slide and window; resolve clears them.
	autoLookahead, autoBlocks bool
}

func defaultConfig() config {
	return config{
		width:      DefaultWidth,
		depth:      DefaultDepth,
		k:          DefaultK,
		candidates: DefaultCandidates,
		window:     DefaultWindow,
		slide:      DefaultSlide,
		lookahead:  DefaultLookahead,
		blocks:     DefaultBlocks,
		late:       DefaultLatePolicy,

		autoLookahead: true,
		autoBlocks:    true,
	}
}

// resolve sets the defaults that depend on other options.
func (c *config) resolve() {
	if c.autoLookahead && c.slide > 0 {
		c.lookahead = (DefaultLookahead + c.slide - 1) / c.slide * c.slide
	}
	if c.autoBlocks && c.slide > 0 && c.window > 0 {
		c.blocks = int(min(int64(DefaultBlocks), int64(c.window/c.slide)))
	}
	c.autoLookahead, c.autoBlocks = false, false
}

// validate checks every option and the rules between them.
func (c config) validate() error {
	switch {
	case c.width < 16 || c.width > maxWidth:
		return fmt.Errorf("sketch: width %d: %w: want 16..%d", c.width, ErrInvalidOption, maxWidth)
	case c.depth < 1 || c.depth > maxDepth:
		return fmt.Errorf("sketch: depth %d: %w: want 1..%d", c.depth, ErrInvalidOption, maxDepth)
	case c.k < 1 || c.k > maxK:
		return fmt.Errorf("sketch: k %d: %w: want 1..%d", c.k, ErrInvalidOption, maxK)
	case c.candidates < c.k || c.candidates > maxCandidates:
		return fmt.Errorf("sketch: candidates %d: %w: want k (%d)..%d", c.candidates, ErrInvalidOption, c.k, maxCandidates)
	case c.slide <= 0:
		return fmt.Errorf("sketch: slide %v: %w: want > 0", c.slide, ErrInvalidOption)
	case c.window < c.slide || c.window%c.slide != 0:
		return fmt.Errorf("sketch: window %v: %w: want a positive multiple of the slide %v", c.window, ErrInvalidOption, c.slide)
	case c.window > maxSpan || c.lookahead > maxSpan || c.window+c.lookahead > maxSpan:
		return fmt.Errorf("sketch: window %v + lookahead %v: %w: want at most %v", c.window, c.lookahead, ErrInvalidOption, maxSpan)
	case c.window/c.slide > maxSlots:
		return fmt.Errorf("sketch: window %v / slide %v: %w: more than %d slots", c.window, c.slide, ErrInvalidOption, maxSlots)
	case c.lookahead < c.slide || c.lookahead%c.slide != 0 || c.lookahead/c.slide > maxSlots:
		return fmt.Errorf("sketch: lookahead %v: %w: want a multiple of the slide %v, 1..%d slides", c.lookahead, ErrInvalidOption, c.slide, maxSlots)
	case c.blocks < 1 || int64(c.blocks) > int64(c.window/c.slide):
		return fmt.Errorf("sketch: blocks %d: %w: want 1..%d (one per slot at most)", c.blocks, ErrInvalidOption, c.window/c.slide)
	case c.late > LateOldest:
		return fmt.Errorf("sketch: late policy %d: %w", c.late, ErrInvalidOption)
	}
	if s := c.fixedBytes(); s > MaxSizeBytes {
		return fmt.Errorf("sketch: configuration needs %d bytes: %w: want at most %d", s, ErrInvalidOption, MaxSizeBytes)
	}
	return nil
}

// slots is the number of slots in the window (N).
func (c config) slots() int { return int(c.window / c.slide) }

// ringSlots is the number of slots kept: the window and the lookahead.
func (c config) ringSlots() int { return int((c.window + c.lookahead) / c.slide) }

// blockSlots is the number of slots per sketch block.
func (c config) blockSlots() int { return (c.slots() + c.blocks - 1) / c.blocks }

// liveBlocks is the number of block sketches kept: enough for every block
// that can overlap the ring, plus one.
func (c config) liveBlocks() int {
	b := c.blockSlots()
	return (c.ringSlots()+b-1)/b + 1
}

// cells is the number of counters in one sketch.
func (c config) cells() int { return c.width * c.depth }

// fixedBytes is the memory of a window of this shape, without the bytes of
// its candidates' item strings. It is computed in float64 so that absurd
// shapes cannot overflow.
func (c config) fixedBytes() int64 {
	f := float64(c.width) * float64(c.depth) * 4 * float64(c.liveBlocks()+1)                // block sketches + aggregate, when wide
	f += float64(c.candidates) * float64(c.ringSlots()) * 4                                 // exact per-slot counts
	f += float64(c.candidates) * float64(candidateBytes+heapEntryBytes+4+8*tableEntryBytes) // candidates, heap, table
	f += float64(c.ringSlots()) * 8                                                         // per-slot totals
	f += float64(c.liveBlocks()) * float64(c.candidates) * 4                                // per-block scratch
	f += windowStructBytes
	if f > math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(f)
}
