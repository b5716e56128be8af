// Package exact counts items exactly over a sliding event-time window: the
// truth that the heavy-hitters sketch (package sketch) is checked against, in
// its tests, in the accuracy report and in the end-to-end tests of hot search,
// and the engine of `rankstream topk --exact`. It follows the sketch's rules
// for slots, the window's end, late and early events and Top-K order, so that
// its counts are what the sketch's bounds must hold. Its memory grows with the
// distinct items and the slots that hold events: it is for checking and
// offline use, not for the pipeline.
//
// It imports only the standard library. It must not import package sketch
// (whose tests import it) nor anything of the pipeline (topics, processors,
// sinks, Kafka, goka, Redis or ClickHouse clients).
package exact

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Event times outside [minSec, maxSec] seconds (about the years 1834 to 2106)
// are infinitely old or infinitely far ahead, as in package sketch; maxSpan
// bounds the window and the lookahead. Together they keep every slot number
// and slot time within int64 nanoseconds.
const (
	minSec  = -(1 << 32)
	maxSec  = 1 << 32
	maxSpan = 100 * 365 * 24 * time.Hour
)

// ErrShapeMismatch is wrapped by Merge's error when the counters differ in
// window, slide, lookahead or late policy.
var ErrShapeMismatch = errors.New("counters of different shapes")

// Item is an item with its exact count in the window.
type Item struct {
	Item  string
	Count uint64
}

// Stats counts what the counter holds and what it dropped, with the meaning
// of package sketch's Stats.
type Stats struct {
	Events       uint64 // events in the window
	Pending      uint64 // events at or after the window's end, kept for the windows to come
	DroppedLate  uint64 // events before the window's start, dropped (the default late policy)
	DroppedEarly uint64 // events at or after the window's end plus the lookahead
}

// shape is what two counters must share to be merged.
type shape struct {
	slide      int64 // nanoseconds
	slots      int64 // slots in the window
	lookahead  int64 // slots ahead of the end that are kept; 0: all
	lateOldest bool
}

// Counter holds the exact count of every item in every slot of one slide,
// for the slots of the window [end − window, end) and those after it. It is
// not safe for concurrent use.
type Counter struct {
	shape
	started bool
	end     int64                       // slot where the window ends (exclusive)
	bySlot  map[int64]map[string]uint64 // slots in the window or ahead of it
	counts  map[string]uint64           // the window's counts; no zeros
	stats   Stats
}

// Option configures a Counter built by New.
type Option func(*shape, time.Duration) error

// WithLookahead drops the events at or after the window's end plus d (a
// multiple of the slide, at least one slide) and counts them in
// Stats.DroppedEarly, overriding the default of keeping every event ahead
// of the window, however far.
func WithLookahead(d time.Duration) Option {
	return func(s *shape, slide time.Duration) error {
		if d < slide || d%slide != 0 || d > maxSpan {
			return fmt.Errorf("exact: lookahead %v: want a multiple of the slide %v, at most %v", d, slide, maxSpan)
		}
		s.lookahead = int64(d / slide)
		return nil
	}
}

// WithLateOldest counts an event before the window's start into the window's
// oldest slot, so that it leaves the window at the next slide, overriding the
// default of dropping it and counting it in Stats.DroppedLate (package
// sketch's LateOldest and LateDrop).
func WithLateOldest() Option {
	return func(s *shape, _ time.Duration) error {
		s.lateOldest = true
		return nil
	}
}

// New returns an empty counter over a window of the given length, moving by
// slide: the window must be a positive multiple of the slide, at most 100
// years.
func New(window, slide time.Duration, opts ...Option) (*Counter, error) {
	if slide <= 0 {
		return nil, fmt.Errorf("exact: slide %v: want > 0", slide)
	}
	if window < slide || window%slide != 0 || window > maxSpan {
		return nil, fmt.Errorf("exact: window %v: want a positive multiple of the slide %v, at most %v", window, slide, maxSpan)
	}
	s := shape{slide: int64(slide), slots: int64(window / slide)}
	for _, o := range opts {
		if err := o(&s, slide); err != nil {
			return nil, err
		}
	}
	return &Counter{shape: s, bySlot: map[int64]map[string]uint64{}, counts: map[string]uint64{}}, nil
}

// Add counts one occurrence of item at event time t. Before the first Add or
// Advance, the window ends at t's slot. An event before the window's start is
// late: dropped, or counted in the oldest slot (WithLateOldest) once the
// window has started. An event past the lookahead is dropped.
func (c *Counter) Add(item string, t time.Time) {
	sec := t.Unix()
	var s int64
	switch {
	case sec > maxSec:
		c.stats.DroppedEarly++
		return
	case sec < minSec && (!c.started || !c.lateOldest):
		c.stats.DroppedLate++
		return
	case sec < minSec:
		s = c.end - c.slots
	default:
		s = c.slotOf(sec, t.Nanosecond())
		if !c.started {
			c.started, c.end = true, s
		}
	}
	switch {
	case s < c.end-c.slots && !c.lateOldest:
		c.stats.DroppedLate++
		return
	case s < c.end-c.slots:
		s = c.end - c.slots
	case c.lookahead > 0 && s >= c.end+c.lookahead:
		c.stats.DroppedEarly++
		return
	}
	m := c.bySlot[s]
	if m == nil {
		m = map[string]uint64{}
		c.bySlot[s] = m
	}
	m[item]++
	if s < c.end {
		c.counts[item]++
		c.stats.Events++
	} else {
		c.stats.Pending++
	}
}

// Advance moves the window's end to watermark, rounded down to the slide.
// The first call sets the end; a watermark at or before the end does
// nothing; events of the slots that leave the window are forgotten.
func (c *Counter) Advance(watermark time.Time) {
	sec := watermark.Unix()
	if sec < minSec {
		return
	}
	target := c.slotOf(min(sec, maxSec), watermark.Nanosecond())
	if !c.started {
		c.started, c.end = true, target
		return
	}
	if target <= c.end {
		return
	}
	// Visit the slots that move, by number or, when the window jumps
	// further than there are slots, by the slots held.
	if target-c.end <= int64(len(c.bySlot)) {
		for ; c.end < target; c.end++ {
			c.enter(c.end)
			c.leave(c.end - c.slots)
		}
		return
	}
	start := target - c.slots
	for s := range c.bySlot {
		switch {
		case s >= target:
		case s < start:
			if s < c.end {
				c.leave(s)
			} else {
				c.skip(s)
			}
		case s >= c.end:
			c.enter(s)
		}
	}
	c.end = target
}

// enter moves slot s from ahead of the window into it.
func (c *Counter) enter(s int64) {
	for it, n := range c.bySlot[s] {
		c.counts[it] += n
		c.stats.Events += n
		c.stats.Pending -= n
	}
}

// leave forgets slot s of the window.
func (c *Counter) leave(s int64) {
	for it, n := range c.bySlot[s] {
		if c.counts[it] -= n; c.counts[it] == 0 {
			delete(c.counts, it)
		}
		c.stats.Events -= n
	}
	delete(c.bySlot, s)
}

// skip forgets slot s ahead of the window, which the window jumps over.
func (c *Counter) skip(s int64) {
	for _, n := range c.bySlot[s] {
		c.stats.Pending -= n
	}
	delete(c.bySlot, s)
}

func (c *Counter) slotOf(sec int64, nsec int) int64 {
	ns := sec*1e9 + int64(nsec)
	q := ns / c.slide
	if ns%c.slide != 0 && ns < 0 {
		q--
	}
	return q
}

// Count returns item's count in the window.
func (c *Counter) Count(item string) uint64 { return c.counts[item] }

// Top returns the k items with the largest counts in the window, by count
// descending then item ascending (the order of package sketch's TopK), or
// all of them if fewer. Items with no event in the window are left out.
func (c *Counter) Top(k int) []Item {
	if k <= 0 {
		return nil
	}
	h := &worstFirst{}
	for it, n := range c.counts {
		x := Item{Item: it, Count: n}
		switch {
		case len(h.items) < k:
			heap.Push(h, x)
		case compare(x, h.items[0]) < 0:
			h.items[0] = x
			heap.Fix(h, 0)
		}
	}
	slices.SortFunc(h.items, compare)
	return h.items
}

// compare orders items by count descending, then item ascending.
func compare(a, b Item) int {
	if c := cmp.Compare(b.Count, a.Count); c != 0 {
		return c
	}
	return cmp.Compare(a.Item, b.Item)
}

// worstFirst is a heap of items whose root is the last in Top's order.
type worstFirst struct{ items []Item }

func (h *worstFirst) Len() int           { return len(h.items) }
func (h *worstFirst) Less(i, j int) bool { return compare(h.items[i], h.items[j]) > 0 }
func (h *worstFirst) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *worstFirst) Push(x any)         { h.items = append(h.items, x.(Item)) }
func (h *worstFirst) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// Bounds returns the window's start (inclusive) and end (exclusive) in UTC;
// both are zero before the first Add or Advance.
func (c *Counter) Bounds() (start, end time.Time) {
	if !c.started {
		return time.Time{}, time.Time{}
	}
	return time.Unix(0, (c.end-c.slots)*c.slide).UTC(), time.Unix(0, c.end*c.slide).UTC()
}

// Stats returns the counter's statistics.
func (c *Counter) Stats() Stats { return c.stats }

// Clone returns a deep copy of the counter.
func (c *Counter) Clone() *Counter {
	d := *c
	d.bySlot = make(map[int64]map[string]uint64, len(c.bySlot))
	for s, m := range c.bySlot {
		d.bySlot[s] = maps.Clone(m)
	}
	d.counts = maps.Clone(c.counts)
	return &d
}

// Merge adds other's events to c, as if c had seen them too; other is not
// changed. As in package sketch, the counter that ends earlier is first
// advanced to the other's end, and the statistics add up. Both must have
// been built with the same window, slide and options, or Merge returns an
// error wrapping ErrShapeMismatch and leaves c unchanged.
func (c *Counter) Merge(other *Counter) error {
	if c.shape != other.shape {
		return fmt.Errorf("exact: merge %+v into %+v: %w", other.shape, c.shape, ErrShapeMismatch)
	}
	c.stats.DroppedLate += other.stats.DroppedLate
	c.stats.DroppedEarly += other.stats.DroppedEarly
	if !other.started {
		return nil
	}
	end := other.end
	if c.started {
		end = max(end, c.end)
	}
	c.Advance(time.Unix(0, end*c.slide))
	for s, m := range other.bySlot {
		if s < end-c.slots {
			continue
		}
		mine := c.bySlot[s]
		if mine == nil {
			mine = map[string]uint64{}
			c.bySlot[s] = mine
		}
		for it, n := range m {
			mine[it] += n
			if s < end {
				c.counts[it] += n
				c.stats.Events += n
			} else {
				c.stats.Pending += n
			}
		}
	}
	return nil
}
