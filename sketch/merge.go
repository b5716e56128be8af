package sketch

import (
	"fmt"
	"slices"
	"strings"
)

// Clone returns a deep copy of the window.
func (w *Window) Clone() *Window {
	w.flush()
	c := *w
	c.agg16, c.blocks16 = slices.Clone(w.agg16), slices.Clone(w.blocks16)
	c.agg32, c.blocks32 = slices.Clone(w.agg32), slices.Clone(w.blocks32)
	c.blockEvents = slices.Clone(w.blockEvents)
	c.slotEvents = slices.Clone(w.slotEvents)
	c.cands = slices.Clone(w.cands)
	c.ring = slices.Clone(w.ring)
	c.heap = append(make([]heapEntry, 0, cap(w.heap)), w.heap...)
	c.free = append(make([]int32, 0, cap(w.free)), w.free...)
	c.table = slices.Clone(w.table)
	return &c
}

// Merge adds other's events to w, as if w had seen them too; other is not
// changed. Both must have been built with the same options, or Merge returns
// an error wrapping ErrShapeMismatch; it returns one wrapping ErrOverflow if
// the merged window could exceed 2^32 − 1 events. On error w is unchanged.
//
// The window that ends earlier is first advanced to the other's end. Sketch
// counters, per-slot counts and statistics add up. The candidates are the
// union of both sets, each with its exact counts summed and, while its
// events before admission (in either window; for a window where it is not a
// candidate, all its events there) may still be in the window, a bound taken
// afresh from the merged sketch, which holds them. If the union exceeds the
// capacity, the candidates with the smallest upper bounds go back into the
// sketch. The merged state is canonical: it depends only on the two
// states, not on which one is the receiver, and for windows at the same end
// whose candidates fit, merging in any grouping or order gives byte-identical
// results.
func (w *Window) Merge(other *Window) error {
	if other == nil {
		return nil
	}
	w.lazyInit()
	other.lazyInit()
	w.flush()
	other.flush()
	if w.cfg != other.cfg {
		return fmt.Errorf("sketch: merge %v into %v: %w", other, w, ErrShapeMismatch)
	}
	if !other.started {
		w.addStats(other.stats)
		return nil
	}
	if w.liveEvents+other.liveEvents > maxEvents {
		return fmt.Errorf("sketch: merge: %d + %d events: %w", w.liveEvents, other.liveEvents, ErrOverflow)
	}
	src := other
	if src == w || (w.started && src.end < w.end) {
		src = other.Clone()
	}
	if !w.started {
		w.started = true
		w.end = src.end
	}
	end := max(w.end, src.end)
	w.advanceTo(end)
	src.advanceTo(end)

	union := w.unionCandidates(src)
	w.addCounters(src)
	for i, v := range src.blockEvents {
		w.blockEvents[i] += v
	}
	w.liveEvents += src.liveEvents
	for i, v := range src.slotEvents {
		w.slotEvents[i] += v
	}
	w.newest = max(w.newest, src.newest)
	w.addStats(src.stats)
	w.installCandidates(union)
	w.invalidate()
	return nil
}

func (w *Window) addStats(s Stats) {
	w.stats.DroppedLate += s.DroppedLate
	w.stats.DroppedEarly += s.DroppedEarly
	w.stats.DroppedFull += s.DroppedFull
	w.stats.Admitted += s.Admitted
}

// merged is a candidate of a merge: its exact per-position counts and the
// newest slot its uncounted events may be in.
type merged struct {
	item     string
	hash     uint64
	col      []uint32
	total    uint64
	admitted int64
	pre, key uint64
}

// unionCandidates collects the candidates of w and src, both at the same
// end, before their sketches are added.
func (w *Window) unionCandidates(src *Window) []*merged {
	byItem := make(map[string]*merged, len(w.heap)+len(src.heap))
	var order []*merged
	for _, win := range []*Window{w, src} {
		for _, e := range win.heap {
			cd := &win.cands[e.c]
			m := byItem[cd.item]
			if m == nil {
				m = &merged{item: cd.item, hash: cd.hash, col: make([]uint32, w.rslots), admitted: minSlot}
				byItem[cd.item] = m
				order = append(order, m)
			}
			for p := range w.rslots {
				m.col[p] += win.ring[p*w.cfg.candidates+int(e.c)]
			}
			m.total += cd.total
			m.admitted = max(m.admitted, cd.admitted)
		}
	}
	// An item that is a candidate of one window only has all its events
	// of the other in that one's sketch, up to its newest slot.
	for _, m := range order {
		for _, win := range []*Window{w, src} {
			if win.lookup(m.hash, m.item) < 0 {
				m.admitted = max(m.admitted, win.newest)
			}
		}
	}
	return order
}

// installCandidates replaces w's candidates with the union, after the
// sketches were added: it computes the bounds, keeps the largest, puts the
// others' exact counts back into the sketch and lays the candidates out
// canonically.
func (w *Window) installCandidates(union []*merged) {
	start := w.end - int64(w.nslots)
	kept := union[:0]
	for _, m := range union {
		if m.admitted >= start {
			// The merged sketch holds the item's uncounted events.
			m.pre = w.estimate(m.hash)
		}
		if m.key = m.total + m.pre; m.key > 0 {
			kept = append(kept, m)
		}
	}
	slices.SortFunc(kept, func(a, b *merged) int {
		if a.key != b.key {
			if a.key > b.key {
				return -1
			}
			return 1
		}
		return strings.Compare(a.item, b.item)
	})
	// The candidates that do not fit go back into the sketch.
	for _, m := range kept[min(len(kept), w.cfg.candidates):] {
		w.sketchAddSlots(m.hash, start, func(p int) uint32 { return m.col[p] })
	}
	kept = kept[:min(len(kept), w.cfg.candidates)]
	clear(w.ring)
	w.clearCandidates()
	w.free = w.free[:0]
	for c := len(w.cands) - 1; c >= len(kept); c-- {
		w.free = append(w.free, int32(c))
	}
	for i, m := range kept {
		c := int32(i)
		w.cands[c] = candidate{item: m.item, hash: m.hash, total: m.total, pre: m.pre, admitted: m.admitted, lo: start}
		for p, v := range m.col {
			w.ring[p*w.cfg.candidates+i] = v
		}
		w.tableInsert(m.hash, c)
		w.heap = append(w.heap, heapEntry{key: m.key, c: c})
	}
	w.heapify()
	// Bounds can only tighten with the per-block estimates.
	for i := range w.heap {
		e := &w.heap[i]
		if cd := &w.cands[e.c]; cd.pre > 0 {
			cd.pre = min(cd.pre, w.preBound(e.c))
			e.key = cd.total + cd.pre
		}
	}
	w.heapify()
}
