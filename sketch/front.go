package sketch

import "math/bits"

// The front table makes an event of one of the heaviest candidates cheap:
// it finds the candidate by the item's bytes, before the item is hashed, and
// defers the event's per-slot count (the candidate's slot count, total and
// lo) to the next flush, which comes before the cached slot changes and
// before anything reads those counts. The heap key is still raised at once,
// and sifted as the candidate table's path does, so the heap's layout, and
// with it every eviction, admission and checkpoint, is the same as without
// the front table: after a flush the state is identical.
//
// An entry holds a candidate whose item is 1 to 16 bytes long, keyed by the
// item's two words (itemWords), which identify the item exactly, so a hit
// never counts another item's event. The table is direct-mapped; a
// candidate found through the candidate table takes the entry of its item
// when the entry is empty or holds a candidate with a smaller key.
type frontEntry struct {
	a, b    uint64 // the item's words
	n       uint8  // the item's length; 0 for an empty entry
	listed  bool   // in frontDirty
	c       int32  // the candidate
	pos     int32  // the candidate's heap position, kept with cands[c].pos
	pending uint32 // events in the cached slot not yet in the ring
}

// Sizes for SizeBytes (amd64).
const (
	frontEntryBytes = 32
	maxFront        = 256
)

// frontSize is the number of front entries for a number of candidates: a
// power of two of at least half of them, at most maxFront.
func frontSize(candidates int) int {
	n := 1
	for n < maxFront && 2*n < candidates {
		n *= 2
	}
	return n
}

// itemWords returns the words that identify an item of 1 to 16 bytes
// exactly, given its length (the bytes Hash mixes), and whether the item
// has such a length.
func itemWords(item string) (a, b uint64, ok bool) {
	switch n := len(item); {
	case n == 0 || n > 16:
		return 0, 0, false
	case n < 4:
		return uint64(item[0]) | uint64(item[n>>1])<<8 | uint64(item[n-1])<<16, 0, true
	case n < 8:
		return load32(item, 0), load32(item, n-4), true
	default:
		return load64(item, 0), load64(item, n-8), true
	}
}

// frontSlot is the front entry of an item with words a, b.
func (w *Window) frontSlot(a, b uint64) int {
	return int(((a ^ bits.RotateLeft64(b, 31)) * 0x9E3779B97F4A7C15) >> w.frontShift)
}

// setPos records that candidate c is at heap position i.
func (w *Window) setPos(c int32, i int) {
	cd := &w.cands[c]
	cd.pos = int32(i)
	if cd.front > 0 {
		w.front[cd.front-1].pos = int32(i)
	}
}

// promote gives candidate c, just counted through the candidate table, the
// front entry f of its item (words a, b) if the entry is empty or its
// candidate has a smaller key.
func (w *Window) promote(c int32, f int, a, b uint64, n int) {
	e := &w.front[f]
	cd := &w.cands[c]
	if e.n != 0 {
		if w.heap[e.pos].key >= w.heap[cd.pos].key {
			return
		}
		w.frontRemove(e.c)
	}
	*e = frontEntry{a: a, b: b, n: uint8(n), listed: e.listed, c: c, pos: cd.pos}
	cd.front = int32(f) + 1
}

// frontRemove takes candidate c out of the front table, counting its
// pending events first.
func (w *Window) frontRemove(c int32) {
	cd := &w.cands[c]
	if cd.front == 0 {
		return
	}
	e := &w.front[cd.front-1]
	w.flushEntry(e)
	*e = frontEntry{listed: e.listed}
	cd.front = 0
}

// flushEntry counts an entry's pending events in the cached slot.
func (w *Window) flushEntry(e *frontEntry) {
	if e.pending == 0 {
		return
	}
	cd := &w.cands[e.c]
	w.ring[w.cacheRing+int(e.c)] += e.pending
	cd.total += uint64(e.pending)
	cd.lo = min(cd.lo, w.cacheSlot)
	e.pending = 0
}

// flushFront counts every entry's pending events in the cached slot.
func (w *Window) flushFront() {
	for _, f := range w.frontDirty {
		e := &w.front[f]
		w.flushEntry(e)
		e.listed = false
	}
	w.frontDirty = w.frontDirty[:0]
}

// clearFront empties the front table; nothing may be pending.
func (w *Window) clearFront() {
	clear(w.front)
	w.frontDirty = w.frontDirty[:0]
}
