package sketch

import (
	"errors"
	"fmt"
)

// check verifies every invariant of the window's state that its methods
// rely on; UnmarshalBinary runs it on what it decoded, and tests after every
// operation. It returns the first violation found.
func (w *Window) check() error {
	w.flush() // the pending events of the slot cache into their slot and block
	if err := w.checkTime(); err != nil {
		return err
	}
	if err := w.checkSketch(); err != nil {
		return err
	}
	return w.checkCandidates()
}

// slotRange is the range of window ends whose slot times fit in int64
// nanoseconds.
func (w *Window) slotRange() (lo, hi int64) {
	return floorDiv(minSec*1e9, w.slideNs) - 1, floorDiv(maxSec*1e9, w.slideNs) + 1
}

func (w *Window) checkTime() error {
	if !w.started {
		if w.end != 0 || w.newest != minSlot || w.liveEvents != 0 || len(w.heap) != 0 {
			return errors.New("window not started but not empty")
		}
		return nil
	}
	lo, hi := w.slotRange()
	if w.end < lo || w.end > hi {
		return fmt.Errorf("window end slot %d outside %d..%d", w.end, lo, hi)
	}
	ahead := int64(w.rslots - w.nslots)
	if w.newest != minSlot && (w.newest >= w.end+ahead || w.newest < lo-int64(w.rslots)) {
		return fmt.Errorf("newest slot %d outside the window ending at %d", w.newest, w.end)
	}
	return nil
}

// liveBlocks marks the block positions that overlap the ring.
func (w *Window) liveBlocks() []bool {
	live := make([]bool, w.nblocks)
	if !w.started {
		return live
	}
	first := floorDiv(w.end-int64(w.nslots), w.bslots)
	last := floorDiv(w.end+int64(w.rslots-w.nslots)-1, w.bslots)
	for b := first; b <= last; b++ {
		live[floorMod(b, int64(w.nblocks))] = true
	}
	return live
}

func (w *Window) checkSketch() error {
	live := w.liveBlocks()
	var events uint64
	for p, n := range w.blockEvents {
		if !live[p] && n != 0 {
			return fmt.Errorf("block position %d is not live but holds %d events", p, n)
		}
		if events += n; n > maxEvents || events > maxEvents {
			return fmt.Errorf("blocks hold more than %d events", uint64(maxEvents))
		}
	}
	if events != w.liveEvents {
		return fmt.Errorf("blocks hold %d events, window counts %d", events, w.liveEvents)
	}
	// Every event of a block is either in the block's sketch, where it adds
	// at most one to each row, or counted exactly for a candidate in one of
	// the block's slots (or gone with an expired slot).
	exact := w.exactPerBlock()
	agg, blocks := w.counters32()
	if w.wide != (w.agg16 == nil) || w.wide != (w.blocks16 == nil) || w.wide == (w.agg32 == nil) || w.wide == (w.blocks32 == nil) {
		return errors.New("sketch counters in both widths or in none")
	}
	width := w.cfg.width
	for p := range w.nblocks {
		blk := blocks[p*w.cells : (p+1)*w.cells]
		for r := range w.cfg.depth {
			var sum uint64
			for _, v := range blk[r*width : (r+1)*width] {
				sum += uint64(v)
			}
			if sum+exact[p] > w.blockEvents[p] {
				return fmt.Errorf("block %d row %d counts %d and candidates %d, above its %d events", p, r, sum, exact[p], w.blockEvents[p])
			}
		}
	}
	for i := range w.cells {
		var sum uint64
		for p := range w.nblocks {
			sum += uint64(blocks[p*w.cells+i])
		}
		if sum != uint64(agg[i]) {
			return fmt.Errorf("aggregate counter %d is %d, blocks sum to %d", i, agg[i], sum)
		}
	}
	// Events per slot: only ring slots hold any, and no more than their
	// block.
	perBlock := make([]uint64, w.nblocks)
	var inRing uint64
	for i := range w.rslots {
		s := w.end - int64(w.nslots) + int64(i)
		n := w.slotEvents[floorMod(s, int64(w.rslots))]
		if n > maxEvents {
			return fmt.Errorf("slot %d holds %d events", s, n)
		}
		if n > 0 && !w.started {
			return errors.New("slot events in a window not started")
		}
		perBlock[floorMod(floorDiv(s, w.bslots), int64(w.nblocks))] += n
		inRing += n
	}
	for p, n := range perBlock {
		if n > w.blockEvents[p] {
			return fmt.Errorf("slots of block position %d hold %d events, the block %d", p, n, w.blockEvents[p])
		}
	}
	if inRing > w.liveEvents {
		return fmt.Errorf("slots hold %d events, blocks %d", inRing, w.liveEvents)
	}
	return nil
}

func (w *Window) checkCandidates() error {
	C := w.cfg.candidates
	if len(w.heap)+len(w.free) != C {
		return fmt.Errorf("%d candidates and %d free, capacity %d", len(w.heap), len(w.free), C)
	}
	for _, c := range w.free {
		if cd := &w.cands[c]; cd.pos != -1 || cd.item != "" || cd.total != 0 || cd.pre != 0 {
			return fmt.Errorf("free candidate %d in use", c)
		}
	}
	start := w.end - int64(w.nslots)
	colSum := make([]uint64, w.rslots)
	var totals uint64
	for i, e := range w.heap {
		cd := &w.cands[e.c]
		switch {
		case cd.pos != int32(i):
			return fmt.Errorf("candidate %d at heap position %d records %d", e.c, i, cd.pos)
		case cd.hash != Hash(cd.item):
			return fmt.Errorf("candidate %q has a wrong hash", cd.item)
		case w.lookup(cd.hash, cd.item) != e.c:
			return fmt.Errorf("candidate %q missing from the table or listed twice", cd.item)
		case cd.pre > w.liveEvents || cd.total > w.liveEvents:
			return fmt.Errorf("candidate %q counts %d + %d, above the window's %d events", cd.item, cd.total, cd.pre, w.liveEvents)
		case e.key != cd.total+cd.pre || e.key == 0:
			return fmt.Errorf("candidate %q has key %d for %d + %d", cd.item, e.key, cd.total, cd.pre)
		case i > 0 && w.heap[(i-1)/2].key > e.key:
			return fmt.Errorf("heap order broken at position %d", i)
		case cd.admitted > w.newest:
			return fmt.Errorf("candidate %q admitted at slot %d after the newest %d", cd.item, cd.admitted, w.newest)
		case cd.pre > 0 && cd.admitted < start:
			return fmt.Errorf("candidate %q keeps a bound for events that left", cd.item)
		}
		var total uint64
		for i := range w.rslots {
			s := start + int64(i)
			p := int(floorMod(s, int64(w.rslots)))
			v := uint64(w.ring[p*C+int(e.c)])
			if v > 0 && s < cd.lo {
				return fmt.Errorf("candidate %q counts events in slot %d before its lo %d", cd.item, s, cd.lo)
			}
			total += v
			colSum[p] += v
		}
		if total != cd.total {
			return fmt.Errorf("candidate %q counts %d in its slots, records %d", cd.item, total, cd.total)
		}
		totals += total
	}
	for p, n := range colSum {
		if n > w.slotEvents[p] {
			return fmt.Errorf("candidates count %d events in slot position %d, which holds %d", n, p, w.slotEvents[p])
		}
	}
	var ring uint64
	for _, v := range w.ring {
		ring += uint64(v)
	}
	if ring != totals {
		return errors.New("free candidates hold counts")
	}
	return nil
}

// exactPerBlock sums the candidates' exact counts per block position.
func (w *Window) exactPerBlock() []uint64 {
	out := make([]uint64, w.nblocks)
	if !w.started {
		return out
	}
	C := w.cfg.candidates
	for i := range w.rslots {
		s := w.end - int64(w.nslots) + int64(i)
		p := int(floorMod(s, int64(w.rslots)))
		b := floorMod(floorDiv(s, w.bslots), int64(w.nblocks))
		for _, v := range w.ring[p*C : (p+1)*C] {
			out[b] += uint64(v)
		}
	}
	return out
}
