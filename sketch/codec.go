package sketch

import (
	"encoding/binary"
	"fmt"
	"time"
)

// encodingVersion is the first byte of MarshalBinary's output. Version 1
// depends on Hash and on the layout of the sketch's columns.
const encodingVersion = 1

// The encoding, after the version byte, is a sequence of varints (unsigned,
// or zigzag where marked), each in its shortest form:
//
//	width depth k candidates (window slide lookahead: zigzag ns) blocks late
//	started (end newest: zigzag) droppedLate droppedEarly droppedFull admitted
//	slotEvents[ring slots] blockEvents[blocks kept]
//	block counters (runs)
//	n heap[n] free[candidates − n]
//	n × (len item pre admitted:zigzag counts[ring slots] (runs))
//
// Counter arrays are "runs": a non-zero counter is its value; a zero starts
// a run, followed by the run's length, and a run is never followed by
// another. Ring slots and blocks are in position order (slot or block number
// modulo their count); the heap and the free stack in their own order, so
// that a restored window continues exactly as the original would have.

// MarshalBinary encodes the window's full state. The encoding is canonical:
// equal states give equal bytes.
func (w *Window) MarshalBinary() ([]byte, error) {
	w.lazyInit()
	w.flush()
	e := encoder{buf: make([]byte, 0, 64+w.nblocks*w.cells/2+len(w.heap)*(w.rslots/4+32))}
	e.buf = append(e.buf, encodingVersion)
	c := w.cfg
	e.uvarints(uint64(c.width), uint64(c.depth), uint64(c.k), uint64(c.candidates))
	e.varints(int64(c.window), int64(c.slide), int64(c.lookahead))
	e.uvarints(uint64(c.blocks), uint64(c.late), b2u(w.started))
	e.varints(w.end, w.newest)
	s := w.stats
	e.uvarints(s.DroppedLate, s.DroppedEarly, s.DroppedFull, s.Admitted)
	e.uvarints(w.slotEvents...)
	e.uvarints(w.blockEvents...)
	if w.wide {
		appendRuns(&e, w.blocks32)
	} else {
		appendRuns(&e, w.blocks16)
	}
	e.uvarint(uint64(len(w.heap)))
	for _, h := range w.heap {
		e.uvarint(uint64(h.c))
	}
	for _, f := range w.free {
		e.uvarint(uint64(f))
	}
	col := make([]uint32, w.rslots)
	for _, h := range w.heap {
		cd := &w.cands[h.c]
		e.uvarint(uint64(len(cd.item)))
		e.buf = append(e.buf, cd.item...)
		e.uvarint(cd.pre)
		e.varints(cd.admitted)
		for p := range col {
			col[p] = w.ring[p*c.candidates+int(h.c)]
		}
		appendRuns(&e, col)
	}
	return e.buf, nil
}

type encoder struct{ buf []byte }

func (e *encoder) uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }

func (e *encoder) uvarints(vs ...uint64) {
	for _, v := range vs {
		e.uvarint(v)
	}
}

func (e *encoder) varints(vs ...int64) {
	for _, v := range vs {
		e.buf = binary.AppendVarint(e.buf, v)
	}
}

// appendRuns appends counters as runs.
func appendRuns[T counter](e *encoder, vs []T) {
	for i := 0; i < len(vs); {
		if vs[i] != 0 {
			e.uvarint(uint64(vs[i]))
			i++
			continue
		}
		j := i
		for j < len(vs) && vs[j] == 0 {
			j++
		}
		e.uvarint(0)
		e.uvarint(uint64(j - i))
		i = j
	}
}

// UnmarshalBinary restores a state encoded by MarshalBinary, replacing the
// receiver's configuration and state. It checks the whole encoding, every
// count and every invariant the window relies on before it changes the
// receiver; on error (wrapping ErrVersion or ErrCorrupt) the receiver is
// unchanged. It never panics, whatever the input.
func (w *Window) UnmarshalBinary(data []byte) error {
	n, err := decode(data)
	if err != nil {
		return fmt.Errorf("sketch: unmarshal %d bytes: %w", len(data), err)
	}
	*w = *n
	return nil
}

// decode builds a window from its encoding.
func decode(data []byte) (*Window, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("empty input: %w", ErrCorrupt)
	}
	if data[0] != encodingVersion {
		return nil, fmt.Errorf("version %d: %w", data[0], ErrVersion)
	}
	d := decoder{buf: data[1:]}
	var cfg config
	cfg.width = d.int(maxWidth)
	cfg.depth = d.int(maxDepth)
	cfg.k = d.int(maxK)
	cfg.candidates = d.int(maxCandidates)
	cfg.window = time.Duration(d.varint())
	cfg.slide = time.Duration(d.varint())
	cfg.lookahead = time.Duration(d.varint())
	cfg.blocks = d.int(maxSlots)
	cfg.late = LatePolicy(d.int(255))
	if d.err != nil {
		return nil, d.err
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	w := newWindow(cfg)
	w.started = d.int(1) == 1
	w.end = d.varint()
	w.newest = d.varint()
	w.stats.DroppedLate = d.uvarint()
	w.stats.DroppedEarly = d.uvarint()
	w.stats.DroppedFull = d.uvarint()
	w.stats.Admitted = d.uvarint()
	for i := range w.slotEvents {
		w.slotEvents[i] = d.uvarint()
	}
	for i := range w.blockEvents {
		w.blockEvents[i] = d.uvarint()
	}
	w.widen() // decoded in 32 bits, narrowed below if they fit
	d.runs(w.blocks32)
	nheap := d.int(cfg.candidates)
	order := make([]int32, 0, cfg.candidates)
	for range cfg.candidates {
		order = append(order, int32(d.int(cfg.candidates-1)))
	}
	if d.err != nil {
		return nil, d.err
	}
	w.heap = w.heap[:0]
	w.free = w.free[:0]
	seen := make([]bool, cfg.candidates)
	for i, c := range order {
		if seen[c] {
			return nil, fmt.Errorf("candidate %d listed twice: %w", c, ErrCorrupt)
		}
		seen[c] = true
		if i < nheap {
			w.heap = append(w.heap, heapEntry{c: c})
		} else {
			w.free = append(w.free, c)
		}
	}
	for i := range w.heap {
		c := w.heap[i].c
		item := d.bytes(d.int(len(d.buf)))
		pre := d.uvarint()
		admitted := d.varint()
		col := make([]uint32, w.rslots)
		d.runs(col)
		if d.err != nil {
			return nil, d.err
		}
		var total uint64
		for p, v := range col {
			w.ring[p*cfg.candidates+int(c)] = v
			total += uint64(v)
		}
		w.cands[c] = candidate{item: string(item), hash: Hash(string(item)), total: total, pre: pre, admitted: admitted, pos: int32(i)}
		w.heap[i].key = total + pre
	}
	if len(d.buf) != 0 {
		return nil, fmt.Errorf("%d trailing bytes: %w", len(d.buf), ErrCorrupt)
	}
	// Derived state: the aggregate, the event total, the table and the
	// candidates' lower slot limit, all checked below.
	var top uint32
	for i := range w.cells {
		var sum uint64
		for p := range w.nblocks {
			sum += uint64(w.blocks32[p*w.cells+i])
		}
		w.agg32[i] = uint32(min(sum, maxEvents))
		top = max(top, w.agg32[i])
	}
	for _, n := range w.blockEvents {
		w.liveEvents += min(n, maxEvents+1)
	}
	for _, e := range w.heap {
		w.cands[e.c].lo = w.end - int64(w.nslots)
		w.tableInsert(w.cands[e.c].hash, e.c)
	}
	if err := w.check(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	w.narrowIfSmall(top)
	return w, nil
}

// decoder reads canonical varints, remembering the first error.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format+": %w", append(args, ErrCorrupt)...)
	}
	d.buf = nil
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.buf)
	if n <= 0 || n != uvarintLen(v) {
		d.fail("bad varint")
		return 0
	}
	d.buf = d.buf[n:]
	return v
}

func (d *decoder) varint() int64 {
	u := d.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// int reads an unsigned varint no larger than limit.
func (d *decoder) int(limit int) int {
	v := d.uvarint()
	if v > uint64(limit) {
		d.fail("value %d above %d", v, limit)
		return 0
	}
	return int(v)
}

func (d *decoder) bytes(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.buf) {
		d.fail("%d bytes wanted, %d left", n, len(d.buf))
		return nil
	}
	b := d.buf[:n]
	d.buf = d.buf[n:]
	return b
}

// runs fills vs from a run encoding, which must cover it exactly.
func (d *decoder) runs(vs []uint32) {
	prevRun := false
	for i := 0; i < len(vs) && d.err == nil; {
		v := d.uvarint()
		if v > maxEvents {
			d.fail("counter %d above %d", v, uint64(maxEvents))
			return
		}
		if v != 0 {
			vs[i] = uint32(v)
			i++
			prevRun = false
			continue
		}
		r := d.int(len(vs) - i)
		if r == 0 || prevRun {
			d.fail("bad zero run")
			return
		}
		clear(vs[i : i+r])
		i += r
		prevRun = true
	}
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
