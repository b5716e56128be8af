package sketch

import "math"

// The sketch's counters (the block sketches and their aggregate) are held
// in 16 bits while every aggregate counter fits, which halves the hot set of
// the sketch path (the aggregate and the current block: 128 KB instead of
// 256 KB at the default width) so that it stays in the CPU's second-level
// cache beside the candidates. A block counter is never above its aggregate
// counter (the aggregate is the sum of the blocks), so one test covers both.
// An update that would take an aggregate counter past 65535 first widens
// every counter to 32 bits, exactly; a block expiry that leaves every
// aggregate counter at most narrowBelow narrows them back. The values, and
// so every estimate, bound and checkpoint, do not depend on the width.

// counter is the type of a sketch counter.
type counter interface{ ~uint16 | ~uint32 }

// narrowBelow is the largest aggregate counter at which a block expiry
// narrows wide counters back to 16 bits: half the 16-bit range, so that a
// window near the limit does not switch at every block.
const narrowBelow = math.MaxUint16 / 2

// minAt returns the smallest of the counters of cnt at idx.
func minAt[T counter](cnt []T, idx []int) uint32 {
	m := uint32(math.MaxUint32)
	for _, i := range idx {
		m = min(m, uint32(cnt[i]))
	}
	return m
}

// addConservative counts n events of the item whose columns are idx into
// block blk, conservatively: the item's smallest counter in the block rises
// by n and no other counter of the item stays below it; agg rises by as much
// as the block. If an aggregate counter would not fit in T it changes
// nothing and returns false.
func addConservative[T counter](blk, agg []T, idx []int, n uint32) bool {
	top := uint64(^T(0))
	m := uint64(minAt(blk, idx)) + uint64(n)
	for _, i := range idx {
		if b := uint64(blk[i]); b < m && uint64(agg[i])+m-b > top {
			return false
		}
	}
	for _, i := range idx {
		if b := blk[i]; uint64(b) < m {
			blk[i] = T(m)
			agg[i] += T(m) - b
		}
	}
	return true
}

// subtractBlock takes an expiring block's counters out of the aggregate,
// clears the block and returns the largest aggregate counter left.
func subtractBlock[T counter](agg, blk []T) uint32 {
	var top T
	for i, v := range blk {
		if v > agg[i] {
			panic("BUG: sketch: block counter above aggregate")
		}
		agg[i] -= v
		top = max(top, agg[i])
	}
	clear(blk)
	return uint32(top)
}

// addInto adds src to dst counter-wise; the caller made sure that the sums
// fit.
func addInto[D, S counter](dst []D, src []S) {
	for i, v := range src {
		dst[i] += D(v)
	}
}

// convert returns a copy of src with counters of type D.
func convert[D, S counter](src []S) []D {
	dst := make([]D, len(src))
	addInto(dst, src)
	return dst
}

// widen moves the counters to 32 bits, if they are not already.
func (w *Window) widen() {
	if w.wide {
		return
	}
	w.agg32, w.blocks32 = convert[uint32](w.agg16), convert[uint32](w.blocks16)
	w.agg16, w.blocks16 = nil, nil
	w.wide = true
}

// narrowIfSmall moves wide counters back to 16 bits when the largest
// aggregate counter, top, is at most narrowBelow.
func (w *Window) narrowIfSmall(top uint32) {
	if !w.wide || top > narrowBelow {
		return
	}
	w.agg16, w.blocks16 = convert[uint16](w.agg32), convert[uint16](w.blocks32)
	w.agg32, w.blocks32 = nil, nil
	w.wide = false
}

// aggMin returns the smallest aggregate counter at idx: the sketch's
// estimate.
func (w *Window) aggMin(idx *[maxDepth]int) uint32 {
	if w.wide {
		return minAt(w.agg32, idx[:w.cfg.depth])
	}
	return minAt(w.agg16, idx[:w.cfg.depth])
}

// blockMin returns the smallest counter at idx of the block sketch at off.
func (w *Window) blockMin(off int, idx *[maxDepth]int) uint32 {
	if w.wide {
		return minAt(w.blocks32[off:off+w.cells], idx[:w.cfg.depth])
	}
	return minAt(w.blocks16[off:off+w.cells], idx[:w.cfg.depth])
}

// sketchAdd counts n events of the item with columns idx into the block
// sketch at off, conservatively (addConservative), widening the counters
// first if they would not fit in 16 bits.
func (w *Window) sketchAdd(off int, idx *[maxDepth]int, n uint32) {
	if !w.wide {
		if addConservative(w.blocks16[off:off+w.cells], w.agg16, idx[:w.cfg.depth], n) {
			return
		}
		w.widen()
	}
	// Cannot fail: an aggregate counter is at most the window's events,
	// which maxEvents bounds.
	addConservative(w.blocks32[off:off+w.cells], w.agg32, idx[:w.cfg.depth], n)
}

// expireBlock subtracts the block sketch at position b from the aggregate
// and clears it.
func (w *Window) expireBlock(b int) {
	lo, hi := b*w.cells, (b+1)*w.cells
	if w.wide {
		w.narrowIfSmall(subtractBlock(w.agg32, w.blocks32[lo:hi]))
		return
	}
	subtractBlock(w.agg16, w.blocks16[lo:hi])
}

// clearCounters zeroes every counter, in 16 bits.
func (w *Window) clearCounters() {
	clear(w.agg16)
	clear(w.blocks16)
	clear(w.agg32)
	clear(w.blocks32)
	w.narrowIfSmall(0)
}

// addCounters adds src's counters to w's, widening w's if a sum could not
// fit in 16 bits.
func (w *Window) addCounters(src *Window) {
	if !w.wide && !src.wide {
		fits := true
		for i, v := range src.agg16 {
			if uint32(w.agg16[i])+uint32(v) > math.MaxUint16 {
				fits = false
				break
			}
		}
		if fits {
			addInto(w.agg16, src.agg16)
			addInto(w.blocks16, src.blocks16)
			return
		}
	}
	w.widen()
	if src.wide {
		addInto(w.agg32, src.agg32)
		addInto(w.blocks32, src.blocks32)
		return
	}
	addInto(w.agg32, src.agg16)
	addInto(w.blocks32, src.blocks16)
}

// counters32 returns the aggregate and the blocks in 32 bits: the arrays
// themselves when wide, copies otherwise (for check and the encoding, not
// for the event path).
func (w *Window) counters32() (agg, blocks []uint32) {
	if w.wide {
		return w.agg32, w.blocks32
	}
	return convert[uint32](w.agg16), convert[uint32](w.blocks16)
}
