package sketch

import (
	"math"
	"strings"
)

// A candidate is an item counted exactly from its admission on, and not in
// the sketch. Its events before admission, which the sketch holds, are
// bounded by pre: the sketch's estimate at admission, later tightened, and
// dropped to zero once the newest slot at admission has left the ring (every
// earlier event was in that slot or before it).
type candidate struct {
	item     string
	hash     uint64
	total    uint64 // exact events since admission in the ring's slots
	pre      uint64 // upper bound on events before admission still in the ring
	admitted int64  // newest slot with an event at admission
	lo       int64  // no count of this candidate in a slot before lo
	pos      int32  // position in the heap; -1 when free
}

// heapEntry is a candidate in the min-heap with its key, total + pre.
type heapEntry struct {
	key uint64
	c   int32
}

// tableEntry maps a hash to a candidate: tag is the hash's high half, c the
// candidate's index plus one, zero for an empty entry.
type tableEntry struct {
	tag uint32
	c   int32
}

// Sizes for SizeBytes (amd64).
const (
	candidateBytes    = 64
	heapEntryBytes    = 16
	tableEntryBytes   = 8
	windowStructBytes = 576
)

// lookup returns the candidate index of item, or -1. The first probe is
// small enough to be inlined into Add; collisions take lookupFrom.
func (w *Window) lookup(h uint64, item string) int32 {
	i := w.home(h)
	e := w.table[i]
	if e.c == 0 {
		return -1
	}
	if e.tag == uint32(h>>32) && w.cands[e.c-1].hash == h && sameItem(w.cands[e.c-1].item, item) {
		return e.c - 1
	}
	return w.lookupFrom(h, item, i)
}

// lookupFrom continues a lookup after position i.
func (w *Window) lookupFrom(h uint64, item string, i int) int32 {
	mask := len(w.table) - 1
	tag := uint32(h >> 32)
	for i = (i + 1) & mask; ; i = (i + 1) & mask {
		e := w.table[i]
		if e.c == 0 {
			return -1
		}
		if e.tag == tag {
			if cd := &w.cands[e.c-1]; cd.hash == h && sameItem(cd.item, item) {
				return e.c - 1
			}
		}
	}
}

// sameItem is a == b, comparing strings of 4 to 16 bytes with two
// overlapping word loads instead of a call.
func sameItem(a, b string) bool {
	n := len(a)
	switch {
	case n != len(b):
		return false
	case n >= 8 && n <= 16:
		return load64(a, 0) == load64(b, 0) && load64(a, n-8) == load64(b, n-8)
	case n >= 4 && n < 8:
		return load32(a, 0) == load32(b, 0) && load32(a, n-4) == load32(b, n-4)
	}
	return a == b
}

// home is the first table position probed for h (Fibonacci hashing, so that
// it uses other bits than the sketch's columns).
func (w *Window) home(h uint64) int { return int((h * 0x9E3779B97F4A7C15) >> w.shift) }

func (w *Window) tableInsert(h uint64, c int32) {
	mask := len(w.table) - 1
	i := w.home(h)
	for w.table[i].c != 0 {
		i = (i + 1) & mask
	}
	w.table[i] = tableEntry{tag: uint32(h >> 32), c: c + 1}
}

// tableDelete removes candidate c with backward-shift deletion, so that no
// tombstones accumulate.
func (w *Window) tableDelete(h uint64, c int32) {
	mask := len(w.table) - 1
	i := w.home(h)
	for w.table[i].c != c+1 {
		if w.table[i].c == 0 {
			panic("BUG: sketch: candidate missing from table")
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; w.table[j].c != 0; j = (j + 1) & mask {
		k := w.home(w.cands[w.table[j].c-1].hash)
		// The entry at j may move to the hole at i unless its home lies
		// cyclically in (i, j].
		if (i <= j && i < k && k <= j) || (i > j && (i < k || k <= j)) {
			continue
		}
		w.table[i] = w.table[j]
		i = j
	}
	w.table[i] = tableEntry{}
}

// offer admits an item that is not a candidate, whose sketch estimate
// before this event is est: into a free place, or in place of the smallest
// candidate, whose key the caller found not above est.
func (w *Window) offer(h uint64, item string, est uint32) {
	if n := len(w.free); n > 0 {
		c := w.free[n-1]
		w.free = w.free[:n-1]
		w.admit(c, h, item, est)
		w.heap = append(w.heap, heapEntry{key: uint64(est) + 1, c: c})
		w.up(len(w.heap) - 1)
		return
	}
	root := w.heap[0].c
	w.evict(root)
	w.admit(root, h, item, est)
	w.heap[0].key = uint64(est) + 1
	w.down(0)
}

// admit makes c the candidate for item, whose event in the cached slot is
// counted exactly from now on, this one included; est, the sketch's
// estimate before it, bounds the earlier events. The item is copied: the
// candidates' strings then sit together in memory, which the lookups'
// comparisons need, and the caller's buffer is not retained.
func (w *Window) admit(c int32, h uint64, item string, est uint32) {
	w.cands[c] = candidate{
		item:     strings.Clone(item),
		hash:     h,
		total:    1,
		pre:      uint64(est),
		admitted: w.newest,
		lo:       w.cacheSlot,
		pos:      w.cands[c].pos,
	}
	w.ring[w.cacheRing+int(c)] = 1
	w.tableInsert(h, c)
	w.stats.Admitted++
}

// evict forgets candidate c: its exact counts go back into the sketch, a
// block at a time, so that the sketch holds all its events again.
func (w *Window) evict(c int32) {
	cd := &w.cands[c]
	w.tableDelete(cd.hash, c)
	if cd.total > 0 {
		stride := w.cfg.candidates
		w.sketchAddSlots(cd.hash, cd.lo, func(p int) uint32 {
			v := w.ring[p*stride+int(c)]
			w.ring[p*stride+int(c)] = 0
			return v
		})
	}
	cd.item = ""
}

// sketchAddSlots adds an item's counts in the ring's slots from lo on, as
// count returns them by ring position, to the block sketches of the slots:
// one conservative update per block.
func (w *Window) sketchAddSlots(h uint64, lo int64, count func(pos int) uint32) {
	var idx [maxDepth]int
	w.columns(h, &idx)
	first := max(lo, w.end-int64(w.nslots))
	last := w.end + int64(w.rslots-w.nslots)
	if first >= last {
		return
	}
	p := int(floorMod(first, int64(w.rslots)))
	block := floorDiv(first, w.bslots)
	var n uint32
	flush := func() {
		if n > 0 {
			w.sketchAdd(int(floorMod(block, int64(w.nblocks)))*w.cells, &idx, n)
			n = 0
		}
	}
	for s := first; s < last; s++ {
		if b := floorDiv(s, w.bslots); b != block {
			flush()
			block = b
		}
		n += count(p)
		if p++; p == w.rslots {
			p = 0
		}
	}
	flush()
}

// release frees candidate c, whose counts are all zero, outside the heap.
func (w *Window) release(c int32) {
	w.tableDelete(w.cands[c].hash, c)
	w.cands[c] = candidate{pos: -1, lo: math.MaxInt64}
	w.free = append(w.free, c)
}

// up moves heap entry i towards the root while its key is smaller.
func (w *Window) up(i int) {
	e := w.heap[i]
	for i > 0 {
		p := (i - 1) / 2
		if w.heap[p].key <= e.key {
			break
		}
		w.heap[i] = w.heap[p]
		w.cands[w.heap[i].c].pos = int32(i)
		i = p
	}
	w.heap[i] = e
	w.cands[e.c].pos = int32(i)
}

// down moves heap entry i towards the leaves while its key is larger.
func (w *Window) down(i int) {
	h := w.heap
	n := len(h)
	e := h[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h[r].key < h[l].key {
			j = r
		}
		if h[j].key >= e.key {
			break
		}
		h[i] = h[j]
		w.cands[h[i].c].pos = int32(i)
		i = j
	}
	h[i] = e
	w.cands[e.c].pos = int32(i)
}

// heapify restores the heap order over the whole heap.
func (w *Window) heapify() {
	for i, e := range w.heap {
		w.cands[e.c].pos = int32(i)
	}
	for i := len(w.heap)/2 - 1; i >= 0; i-- {
		w.down(i)
	}
}
