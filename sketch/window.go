package sketch

import (
	"fmt"
	"math"
	"time"
)

// minSlot is the newest slot of a window without events.
const minSlot = math.MinInt64

// maxEvents bounds the events held by the live blocks so that no 32-bit
// counter can overflow.
const maxEvents = math.MaxUint32

// Event times outside [minSec, maxSec] (about the years 1834 to 2106) are
// treated as infinitely old or infinitely far ahead. With maxSpan this keeps
// every slot time within int64 nanoseconds.
const (
	minSec = -(1 << 32)
	maxSec = 1 << 32
)

// Window is a sliding-window heavy-hitters sketch over event time. It is not
// safe for concurrent use. The zero Window is a window with the default
// options, allocated on first use.
//
// The window is a ring of slots, one per slide, covering the window itself
// ([end − window, end), where end is the last watermark given to Advance,
// rounded down to the slide) and the lookahead after it. An event of a
// candidate item is counted exactly in its slot; any other event in a
// Count-Min Sketch with conservative update, kept as one sketch per block of
// slots plus their sum. A min-heap keeps the candidates with the largest
// upper bounds. See the package documentation for the guarantees.
type Window struct {
	cfg     config
	nslots  int   // slots in the window
	rslots  int   // slots in the ring: window and lookahead
	bslots  int64 // slots per block
	nblocks int   // block sketches kept
	cells   int   // counters per sketch
	slideNs int64

	started bool
	end     int64 // absolute slot number where the window ends (exclusive)
	newest  int64 // newest slot that received an event

	// The sketch's counters (counters.go): the sum of the block sketches,
	// and block b at (b mod nblocks)*cells, in 16 bits unless wide, in
	// 32 bits if wide; the other pair is nil.
	agg16, blocks16 []uint16
	agg32, blocks32 []uint32
	wide            bool
	blockEvents     []uint64 // events counted into each block sketch
	liveEvents      uint64   // sum of blockEvents
	slotEvents      []uint64 // events per ring position

	cands []candidate
	ring  []uint32    // exact counts, ring position × candidates
	heap  []heapEntry // active candidates, a min-heap by key
	free  []int32     // free candidate indexes, a stack
	table []tableEntry
	shift uint // 64 − log2(len(table))

	stats Stats

	// The slot of the last event, so that events in the same slot skip the
	// division. cacheLo > cacheHi means empty.
	cacheLo, cacheHi int64 // unix nanoseconds [lo, hi)
	cacheSlot        int64 // absolute slot
	cacheRing        int   // ring position × candidates
	cacheSlotPos     int   // ring position
	cacheBlock       int   // block position × cells
	cacheBlockPos    int   // block position
	// Events counted in the cached slot but not yet in slotEvents and
	// blockEvents (liveEvents has them): flush adds them when the cache
	// changes and before anything reads those counts.
	cachePending uint64
}

// Stats counts what the window holds and what it dropped.
type Stats struct {
	// Events is the number of events in the window.
	Events uint64
	// Pending is the number of events ahead of the window's end, kept for
	// the windows to come.
	Pending uint64
	// DroppedLate counts events older than the window's start, dropped under
	// LateDrop.
	DroppedLate uint64
	// DroppedEarly counts events further ahead of the window's end than the
	// lookahead.
	DroppedEarly uint64
	// DroppedFull counts events dropped because the window already held
	// 2^32 − 1 events.
	DroppedFull uint64
	// Admitted counts the items that became candidates.
	Admitted uint64
}

// New returns an empty window configured by opts; see the With… options for
// the defaults.
func New(opts ...Option) (*Window, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	cfg.resolve()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newWindow(cfg), nil
}

// lazyInit gives a zero Window the default configuration.
func (w *Window) lazyInit() {
	if w.cells == 0 {
		cfg := defaultConfig()
		cfg.resolve()
		*w = *newWindow(cfg)
	}
}

// newWindow allocates an empty window for a validated config.
func newWindow(cfg config) *Window {
	w := &Window{
		cfg:     cfg,
		nslots:  cfg.slots(),
		rslots:  cfg.ringSlots(),
		bslots:  int64(cfg.blockSlots()),
		nblocks: cfg.liveBlocks(),
		cells:   cfg.cells(),
		slideNs: int64(cfg.slide),
	}
	w.agg16 = make([]uint16, w.cells)
	w.blocks16 = make([]uint16, w.nblocks*w.cells)
	w.blockEvents = make([]uint64, w.nblocks)
	w.slotEvents = make([]uint64, w.rslots)
	w.cands = make([]candidate, cfg.candidates)
	w.ring = make([]uint32, w.rslots*cfg.candidates)
	w.heap = make([]heapEntry, 0, cfg.candidates)
	w.free = make([]int32, 0, cfg.candidates)
	tableSize := 4
	for tableSize < 8*cfg.candidates {
		tableSize *= 2
	}
	w.table = make([]tableEntry, tableSize)
	w.shift = 64
	for s := tableSize; s > 1; s /= 2 {
		w.shift--
	}
	w.resetState()
	return w
}

// resetState empties the window, keeping its configuration and memory.
func (w *Window) resetState() {
	w.started = false
	w.end, w.newest = 0, minSlot
	w.clearAll()
	w.stats = Stats{}
	w.invalidate()
}

// clearCandidates forgets every candidate; the ring must already be zero.
func (w *Window) clearCandidates() {
	clear(w.cands)
	clear(w.table)
	w.heap = w.heap[:0]
	w.free = w.free[:0]
	for c := len(w.cands) - 1; c >= 0; c-- {
		w.cands[c].pos = -1
		w.free = append(w.free, int32(c))
	}
}

// invalidate empties the slot cache.
func (w *Window) invalidate() {
	w.flush()
	w.cacheLo, w.cacheHi = 1, 0
}

// flush adds the cached slot's pending events to its slot and block counts.
func (w *Window) flush() {
	if w.cachePending > 0 {
		w.slotEvents[w.cacheSlotPos] += w.cachePending
		w.blockEvents[w.cacheBlockPos] += w.cachePending
		w.cachePending = 0
	}
}

// Reset empties the window and its statistics, keeping its configuration.
func (w *Window) Reset() { w.resetState() }

// K returns the most items TopK returns.
func (w *Window) K() int { return w.cfg.k }

// Add counts one occurrence of item at event time ts. Events older than the
// window's start follow the late policy; events further ahead of the
// window's end than the lookahead are dropped. Before the first Advance the
// window ends at the slot of the first event. Add allocates only when the
// item becomes a candidate (one copy of its string).
func (w *Window) Add(item string, ts time.Time) { w.AddHash(Hash(item), item, ts) }

// AddHash is Add for a caller that already has h == Hash(item).
func (w *Window) AddHash(h uint64, item string, ts time.Time) {
	sec := ts.Unix()
	if sec < minSec || sec > maxSec {
		if !w.locateFar(sec) {
			return
		}
	} else if ns := sec*1e9 + int64(ts.Nanosecond()); ns < w.cacheLo || ns >= w.cacheHi {
		if !w.locate(ns) {
			return
		}
	}
	if w.liveEvents >= maxEvents {
		w.stats.DroppedFull++
		return
	}
	w.liveEvents++
	w.cachePending++
	if w.cacheSlot > w.newest {
		w.newest = w.cacheSlot
	}
	// A candidate is counted exactly, in its slot, and not in the sketch.
	// The table's first probe is inlined here (see lookup), as is the rest
	// of the path: the compiler would not, and calls cost a tenth of it.
	i := w.home(h)
	if e := w.table[i]; e.c != 0 {
		c := e.c - 1
		if e.tag != uint32(h>>32) || w.cands[c].hash != h || !sameItem(w.cands[c].item, item) {
			c = w.lookupFrom(h, item, i)
		}
		if c >= 0 {
			w.ring[w.cacheRing+int(c)]++
			cd := &w.cands[c]
			cd.total++
			cd.lo = min(cd.lo, w.cacheSlot)
			p := int(cd.pos)
			w.heap[p].key++
			// Heavy items sit at the min-heap's leaves: nothing to sift.
			if 2*p+1 < len(w.heap) {
				w.down(p)
			}
			return
		}
	}
	// Any other item: it becomes a candidate if the sketch's estimate of its
	// earlier events, plus this one, beats the smallest candidate; otherwise
	// the event goes into the sketch with conservative update.
	if w.cfg.depth != 4 || w.wide {
		w.addGeneric(h, item)
		return
	}
	width := uint64(w.cfg.width)
	blk := w.blocks16[w.cacheBlock : w.cacheBlock+w.cells]
	agg := w.agg16[:w.cells]
	h1, h2 := uint32(h), uint32(h>>32)
	i0 := int((uint64(h1) * width) >> 32)
	i1 := w.cfg.width + int((uint64(h1+h2)*width)>>32)
	i2 := 2*w.cfg.width + int((uint64(h1+2*h2)*width)>>32)
	i3 := 3*w.cfg.width + int((uint64(h1+3*h2)*width)>>32)
	a0, a1, a2, a3 := uint32(agg[i0]), uint32(agg[i1]), uint32(agg[i2]), uint32(agg[i3])
	b0, b1, b2, b3 := uint32(blk[i0]), uint32(blk[i1]), uint32(blk[i2]), uint32(blk[i3])
	if est := min(a0, a1, a2, a3); len(w.free) > 0 || uint64(est) >= w.heap[0].key {
		w.offer(h, item, est)
		return
	}
	m := min(b0, b1, b2, b3) + 1
	n0, n1, n2, n3 := max(b0, m), max(b1, m), max(b2, m), max(b3, m)
	s0, s1, s2, s3 := a0+n0-b0, a1+n1-b1, a2+n2-b2, a3+n3-b3
	if max(s0, s1, s2, s3) > math.MaxUint16 {
		// The exact way: every counter to 32 bits, then the same update.
		w.widen()
		w.addGeneric(h, item)
		return
	}
	blk[i0], blk[i1], blk[i2], blk[i3] = uint16(n0), uint16(n1), uint16(n2), uint16(n3)
	agg[i0], agg[i1], agg[i2], agg[i3] = uint16(s0), uint16(s1), uint16(s2), uint16(s3)
}

// Bounds returns the window's start (inclusive) and end (exclusive) in UTC;
// both are zero before the first Add or Advance.
func (w *Window) Bounds() (start, end time.Time) {
	if !w.started {
		return time.Time{}, time.Time{}
	}
	return w.slotTime(w.end - int64(w.nslots)), w.slotTime(w.end)
}

// Stats returns the window's counters.
func (w *Window) Stats() Stats {
	w.flush()
	s := w.stats
	if !w.started {
		return s
	}
	for i := range w.rslots {
		slot := w.end - int64(w.nslots) + int64(i)
		if n := w.slotEvents[floorMod(slot, int64(w.rslots))]; i < w.nslots {
			s.Events += n
		} else {
			s.Pending += n
		}
	}
	return s
}

// Dropped returns the events dropped so far by reason, as Stats counts them, without
// walking the slots: cheap enough to call around every Add.
func (w *Window) Dropped() (late, early, full uint64) {
	return w.stats.DroppedLate, w.stats.DroppedEarly, w.stats.DroppedFull
}

// SizeBytes returns the memory the window holds: its arrays and the bytes
// of its candidates' item strings. It does not depend on the number of
// distinct items seen.
func (w *Window) SizeBytes() int {
	n := windowStructBytes +
		2*(cap(w.agg16)+cap(w.blocks16)) + 4*(cap(w.agg32)+cap(w.blocks32)+cap(w.ring)) +
		8*(cap(w.blockEvents)+cap(w.slotEvents)) +
		candidateBytes*cap(w.cands) + heapEntryBytes*cap(w.heap) +
		4*cap(w.free) + tableEntryBytes*cap(w.table)
	for _, e := range w.heap {
		n += len(w.cands[e.c].item)
	}
	return n
}

// String describes the window's shape, for logs.
func (w *Window) String() string {
	return fmt.Sprintf("sketch.Window{width=%d depth=%d k=%d candidates=%d window=%v slide=%v lookahead=%v blocks=%d late=%v}",
		w.cfg.width, w.cfg.depth, w.cfg.k, w.cfg.candidates, w.cfg.window, w.cfg.slide, w.cfg.lookahead, w.cfg.blocks, w.cfg.late)
}
