package sketch

import "math"

// The Count-Min Sketch of a window is kept as one sketch per block of slots,
// each updated conservatively on its own, and agg, the counter-wise sum of
// the live blocks. Because conservative update holds within every block
// (each counter of an item is at least the item's count in that block), the
// sum holds it for the whole window, and a block that leaves the window can
// be subtracted exactly. Conservative update applied to the sum instead
// would not survive the subtraction.

// columns computes the counter index of h in every row: row r uses the
// Kirsch–Mitzenmacher hash h1 + r·h2, mapped onto the width by a multiply
// and shift.
func (w *Window) columns(h uint64, idx *[maxDepth]int) {
	width := uint64(w.cfg.width)
	h1, h2 := uint32(h), uint32(h>>32)
	for r := range w.cfg.depth {
		g := h1 + uint32(r)*h2
		idx[r] = r*w.cfg.width + int((uint64(g)*width)>>32)
	}
}

// minAt returns the smallest of an item's counters in cnt (a sketch: block or aggregate),
// whose columns are idx.
func (w *Window) minAt(cnt []uint32, idx *[maxDepth]int) uint32 {
	m := uint32(math.MaxUint32)
	for _, i := range idx[:w.cfg.depth] {
		m = min(m, cnt[i])
	}
	return m
}

// addGeneric is the end of AddHash for an item that is not a candidate, at
// any depth (AddHash inlines it for depth 4).
func (w *Window) addGeneric(h uint64, item string) {
	var idx [maxDepth]int
	w.columns(h, &idx)
	est := w.minAt(w.agg, &idx)
	if len(w.free) > 0 || uint64(est) >= w.heap[0].key {
		w.offer(h, item, est)
		return
	}
	w.sketchAdd(w.cacheBlock, &idx, 1)
}

// sketchAdd counts n events of the item with columns idx into the block
// sketch at off, conservatively: the item's smallest counter in the block
// rises by n and no other counter of the item stays below it. The
// aggregate rises by as much as the block.
func (w *Window) sketchAdd(off int, idx *[maxDepth]int, n uint32) {
	blk := w.blocks[off : off+w.cells]
	m := w.minAt(blk, idx) + n
	for _, i := range idx[:w.cfg.depth] {
		if b := blk[i]; b < m {
			blk[i] = m
			w.agg[i] += m - b
		}
	}
}

// estimate returns the sketch's upper bound on the events of h held by the
// live blocks.
func (w *Window) estimate(h uint64) uint64 {
	var idx [maxDepth]int
	w.columns(h, &idx)
	return uint64(w.minAt(w.agg, &idx))
}

// preBound computes a fresh upper bound on candidate c's events before its
// admission that are still in the ring. The sketch holds exactly those of
// its events (and others' by collision): not its events since admission.
// Two bounds hold and the smaller is returned: the sketch's estimate, and
// the sum of the per-block estimates of the live blocks that begin at or
// before the admission slot (the earlier events cannot be in later blocks).
// It is used when a block expires and after a merge, not per event.
func (w *Window) preBound(c int32) uint64 {
	cd := &w.cands[c]
	var idx [maxDepth]int
	w.columns(cd.hash, &idx)
	bound := w.minAt(w.agg, &idx)
	first := w.end - int64(w.nslots)
	last := min(cd.admitted, w.end+int64(w.rslots-w.nslots)-1)
	var sum uint64
	for b := floorDiv(first, w.bslots); b <= floorDiv(last, w.bslots); b++ {
		p := int(floorMod(b, int64(w.nblocks)))
		if w.blockEvents[p] == 0 {
			continue // all its counters are zero
		}
		off := p * w.cells
		if sum += uint64(w.minAt(w.blocks[off:off+w.cells], &idx)); sum >= uint64(bound) {
			return uint64(bound)
		}
	}
	return sum
}
