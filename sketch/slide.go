package sketch

import (
	"math"
	"time"
)

// This file moves the window through event time: it maps event times to
// slots and forgets the slots that leave.

// locate fills the slot cache for an event at ns unix nanoseconds and
// reports whether the event is counted.
func (w *Window) locate(ns int64) bool {
	w.lazyInit()
	slot := floorDiv(ns, w.slideNs)
	if !w.started {
		w.started = true
		w.end = slot
	}
	switch {
	case slot < w.end-int64(w.nslots):
		if w.cfg.late == LateDrop {
			w.stats.DroppedLate++
			return false
		}
		w.setCache(w.end - int64(w.nslots))
	case slot >= w.end+int64(w.rslots-w.nslots):
		w.stats.DroppedEarly++
		return false
	default:
		w.setCache(slot)
	}
	w.cacheLo = slot * w.slideNs
	w.cacheHi = w.cacheLo + w.slideNs
	return true
}

// locateFar handles an event time outside the supported range, infinitely
// far ahead (early) or behind (late); a late event before the window has
// started has no oldest slot to go to. It leaves the cache pointing at the
// slot the event goes to, if any, but with no time range.
func (w *Window) locateFar(sec int64) bool {
	w.lazyInit()
	switch {
	case sec > maxSec:
		w.stats.DroppedEarly++
		return false
	case !w.started || w.cfg.late == LateDrop:
		w.stats.DroppedLate++
		return false
	}
	w.setCache(w.end - int64(w.nslots))
	w.invalidate()
	return true
}

// setCache points the cache at an absolute slot inside the ring.
func (w *Window) setCache(slot int64) {
	w.flush()
	pos := int(floorMod(slot, int64(w.rslots)))
	b := int(floorMod(floorDiv(slot, w.bslots), int64(w.nblocks)))
	w.cacheSlot = slot
	w.cacheSlotPos = pos
	w.cacheRing = pos * w.cfg.candidates
	w.cacheBlockPos = b
	w.cacheBlock = b * w.cells
}

// Advance moves the window's end to watermark, rounded down to the slide,
// and returns how many slides it made (at most math.MaxInt32). Slots that
// leave the window are forgotten exactly. A watermark at or before the
// current end does nothing; the first call sets the end. After Advance,
// TopK describes the window that ends at the new end: call it after each
// slide to get every window step.
func (w *Window) Advance(watermark time.Time) int {
	w.lazyInit()
	sec := watermark.Unix()
	if sec < minSec {
		return 0
	}
	sec = min(sec, maxSec)
	target := floorDiv(sec*1e9+int64(watermark.Nanosecond()), w.slideNs)
	w.invalidate()
	if !w.started {
		w.started = true
		w.end = target
		return 0
	}
	if target <= w.end {
		return 0
	}
	steps := target - w.end
	w.advanceTo(target)
	return clampInt(steps)
}

func clampInt(v int64) int {
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(v)
}

// clearAll forgets every event, as when the window moves past all of them.
func (w *Window) clearAll() {
	w.clearCounters()
	clear(w.blockEvents)
	w.liveEvents = 0
	clear(w.slotEvents)
	w.cachePending = 0
	clear(w.ring)
	w.clearCandidates()
}

// expireSlot moves the window by one slot, subtracting the slot that leaves
// it. It reports whether a block of the sketch expired with it, and whether
// a candidate's key dropped to zero. The heap stays ordered.
func (w *Window) expireSlot() (blockExpired, emptied bool) {
	s := w.end - int64(w.nslots)
	p := int(floorMod(s, int64(w.rslots)))
	row := w.ring[p*w.cfg.candidates : (p+1)*w.cfg.candidates]
	for c, v := range row {
		if v == 0 {
			continue
		}
		cd := &w.cands[c]
		if uint64(v) > cd.total {
			panic("BUG: sketch: slot count above candidate total")
		}
		cd.total -= uint64(v)
		row[c] = 0
		i := int(cd.pos)
		w.heap[i].key -= uint64(v)
		emptied = emptied || w.heap[i].key == 0
		w.up(i)
	}
	w.slotEvents[p] = 0
	w.end++
	if floorMod(s+1, w.bslots) != 0 {
		return false, emptied
	}
	b := int(floorMod(floorDiv(s, w.bslots), int64(w.nblocks)))
	// A block without events has only zero counters (check verifies that
	// its rows sum to at most its events): nothing to subtract.
	if w.blockEvents[b] > 0 {
		w.expireBlock(b)
	}
	w.liveEvents -= w.blockEvents[b]
	w.blockEvents[b] = 0
	return true, emptied
}

// afterExpiry updates the candidates after the window moved: it drops the
// bounds of events before admission once they left, tightens them with the
// sketch when a block expired, and frees candidates left with nothing.
// Keys only decrease, so sifting each up keeps the heap ordered: entries
// that up moves come from positions already visited.
func (w *Window) afterExpiry(blockExpired, emptied bool) {
	start := w.end - int64(w.nslots)
	for i := range w.heap {
		c := w.heap[i].c
		cd := &w.cands[c]
		if cd.pre == 0 {
			continue
		}
		old := cd.pre
		if cd.admitted < start {
			cd.pre = 0
		} else if blockExpired {
			cd.pre = min(cd.pre, w.preBound(c))
		}
		if d := old - cd.pre; d > 0 {
			w.heap[i].key -= d
			emptied = emptied || w.heap[i].key == 0
			w.up(i)
		}
	}
	if emptied {
		w.releaseEmpty()
	}
}

// releaseEmpty frees the candidates whose key is zero and rebuilds the heap.
func (w *Window) releaseEmpty() {
	j := 0
	for _, e := range w.heap {
		if e.key == 0 {
			w.release(e.c)
			continue
		}
		w.heap[j] = e
		j++
	}
	w.heap = w.heap[:j]
	if j == 0 {
		// Nothing left: back to the canonical empty layout.
		w.clearCandidates()
		return
	}
	w.heapify()
}

// advanceTo moves the window's end to slot end, as Advance does.
func (w *Window) advanceTo(end int64) {
	if end <= w.end {
		return
	}
	w.invalidate()
	steps := end - w.end
	if steps >= int64(w.rslots)+w.bslots {
		w.clearAll()
		w.end = end
		return
	}
	var blockExpired, emptied bool
	for range steps {
		b, e := w.expireSlot()
		blockExpired, emptied = blockExpired || b, emptied || e
	}
	w.afterExpiry(blockExpired, emptied)
}

func (w *Window) slotTime(slot int64) time.Time {
	return time.Unix(0, slot*w.slideNs).UTC()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}
