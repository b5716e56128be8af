package topics

import (
	"encoding/binary"
	"errors"
	"maps"
	"slices"
)

// HotCheckpoint is the value of a record of HotCheckpoints (keyed by a key of the hot group's
// partition): one loop partition's whole state after the loop record at LoopOffset. With the
// loop records after LoopOffset it rebuilds the state exactly.
//
// The binary form, little-endian: a version byte (HotCheckpointVersion), the int64s LoopOffset,
// EndMs, Dropped (from version 2), Shape's WindowMs, SlideMs, LookaheadMs and K; then Seen,
// Marks and First, each a uint32 count and that many (int32 partition, int64 value) pairs by
// partition ascending; then (from version 2) Held, a uint32 count and that many (int64 ms,
// uint32 length, term bytes); then (from version 3) Idle and (from version 4) Live, each a uint32
// count and that many int32 partitions ascending; then Window to the end.
type HotCheckpoint struct {
	LoopOffset int64
	// EndMs is the end of the last window emitted, Unix ms (0: none yet).
	EndMs int64
	// Dropped counts the events dropped since the window at EndMs, for the next partial.
	Dropped uint64
	// Shape is the configuration the window was made with; a checkpoint of another shape is
	// not used.
	Shape HotShape
	// Seen maps an input partition to the input offset after the last term counted from it.
	Seen map[int32]int64
	// Marks maps an input partition to its watermark, Unix ms.
	Marks map[int32]int64
	// First maps an input partition to its first watermark (before a window was emitted they
	// fix the first one).
	First map[int32]int64
	// Held are the terms beyond the sketch's reach, waiting for the window, in arrival order.
	Held []HotHeldTerm
	// Idle are the input partitions whose latest word was an idle marker (HotLoopIdle), which
	// no longer hold the windows back, ascending; nil when none.
	Idle []int32
	// Live are the input partitions whose latest marker said they read at the head of their
	// log (HotLoopRecord.Live), ascending; nil when none.
	Live []int32
	// Window is the window's sketch (sketch.Window.MarshalBinary).
	Window []byte
}

// HotHeldTerm is a term a loop partition holds until the window reaches its event time.
type HotHeldTerm struct {
	Ms   int64
	Term string
}

// HotShape is the configuration of a hot window, in milliseconds, and its K.
type HotShape struct{ WindowMs, SlideMs, LookaheadMs, K int64 }

// HotCheckpointVersion is the version Encode writes. Version 4 added Live, version 3 Idle,
// version 2 Dropped and Held; older versions are read without them.
const HotCheckpointVersion byte = 4

// ErrBadHotCheckpoint is the error of bytes that are no checkpoint of a known version.
var ErrBadHotCheckpoint = errors.New("hot: malformed checkpoint")

// Encode returns the checkpoint's binary form (version HotCheckpointVersion).
func (c *HotCheckpoint) Encode() []byte {
	b := make([]byte, 0, 1+7*8+12*(len(c.Seen)+len(c.Marks)+len(c.First))+len(c.Window))
	b = append(b, HotCheckpointVersion)
	for _, v := range []int64{c.LoopOffset, c.EndMs, int64(c.Dropped), c.Shape.WindowMs, c.Shape.SlideMs, c.Shape.LookaheadMs, c.Shape.K} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	for _, m := range []map[int32]int64{c.Seen, c.Marks, c.First} {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(m)))
		for _, part := range slices.Sorted(maps.Keys(m)) {
			b = binary.LittleEndian.AppendUint32(b, uint32(part))
			b = binary.LittleEndian.AppendUint64(b, uint64(m[part]))
		}
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Held)))
	for _, t := range c.Held {
		b = binary.LittleEndian.AppendUint64(b, uint64(t.Ms))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(t.Term)))
		b = append(b, t.Term...)
	}
	for _, parts := range [][]int32{c.Idle, c.Live} {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(parts)))
		for _, part := range parts {
			b = binary.LittleEndian.AppendUint32(b, uint32(part))
		}
	}
	return append(b, c.Window...)
}

// DecodeHotCheckpoint reads a checkpoint of version 1 to 4; anything else fails with
// ErrBadHotCheckpoint, without panicking. Window shares b's memory.
func DecodeHotCheckpoint(b []byte) (*HotCheckpoint, error) {
	if len(b) < 1+6*8 || b[0] < 1 || b[0] > HotCheckpointVersion || b[0] >= 2 && len(b) < 1+7*8 {
		return nil, ErrBadHotCheckpoint
	}
	version := b[0]
	b = b[1:]
	next := func() int64 { v := int64(binary.LittleEndian.Uint64(b)); b = b[8:]; return v }
	c := &HotCheckpoint{LoopOffset: next(), EndMs: next()}
	if version >= 2 {
		c.Dropped = uint64(next())
	}
	c.Shape = HotShape{WindowMs: next(), SlideMs: next(), LookaheadMs: next(), K: next()}
	// count reads a list's length, which must fit in what is left at 12 bytes an entry at least.
	count := func() (int, bool) {
		if len(b) < 4 {
			return 0, false
		}
		n := int(binary.LittleEndian.Uint32(b))
		b = b[4:]
		return n, n <= len(b)/12
	}
	for _, m := range []*map[int32]int64{&c.Seen, &c.Marks, &c.First} {
		n, ok := count()
		if !ok {
			return nil, ErrBadHotCheckpoint
		}
		*m = make(map[int32]int64, n)
		for range n {
			(*m)[int32(binary.LittleEndian.Uint32(b))] = int64(binary.LittleEndian.Uint64(b[4:]))
			b = b[12:]
		}
	}
	if version >= 2 {
		n, ok := count()
		if !ok {
			return nil, ErrBadHotCheckpoint
		}
		for range n {
			if len(b) < 12 || int(binary.LittleEndian.Uint32(b[8:])) > len(b)-12 {
				return nil, ErrBadHotCheckpoint
			}
			ms, size := int64(binary.LittleEndian.Uint64(b)), int(binary.LittleEndian.Uint32(b[8:]))
			c.Held = append(c.Held, HotHeldTerm{Ms: ms, Term: string(b[12 : 12+size])})
			b = b[12+size:]
		}
	}
	lists := []*[]int32{&c.Idle, &c.Live}[:max(int(version)-2, 0)]
	for _, parts := range lists {
		if len(b) < 4 || int(binary.LittleEndian.Uint32(b)) > (len(b)-4)/4 {
			return nil, ErrBadHotCheckpoint
		}
		n := int(binary.LittleEndian.Uint32(b))
		b = b[4:]
		for range n {
			*parts = append(*parts, int32(binary.LittleEndian.Uint32(b)))
			b = b[4:]
		}
	}
	c.Window = b
	return c, nil
}
