package sketch

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

// addGeneric is the end of AddHash for an item that is not a candidate, at
// any depth or with wide counters (AddHash inlines the case of depth 4 and
// 16-bit counters).
func (w *Window) addGeneric(h uint64, item string) {
	var idx [maxDepth]int
	w.columns(h, &idx)
	est := w.aggMin(&idx)
	if len(w.free) > 0 || uint64(est) >= w.heap[0].key {
		w.offer(h, item, est)
		return
	}
	w.sketchAdd(w.cacheBlock, &idx, 1)
}

// estimate returns the sketch's upper bound on the events of h held by the
// live blocks.
func (w *Window) estimate(h uint64) uint64 {
	var idx [maxDepth]int
	w.columns(h, &idx)
	return uint64(w.aggMin(&idx))
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
	bound := w.aggMin(&idx)
	first := w.end - int64(w.nslots)
	last := min(cd.admitted, w.end+int64(w.rslots-w.nslots)-1)
	var sum uint64
	for b := floorDiv(first, w.bslots); b <= floorDiv(last, w.bslots); b++ {
		p := int(floorMod(b, int64(w.nblocks)))
		if w.blockEvents[p] == 0 {
			continue // all its counters are zero
		}
		if sum += uint64(w.blockMin(p*w.cells, &idx)); sum >= uint64(bound) {
			return uint64(bound)
		}
	}
	return sum
}
