package topics

import (
	"encoding/binary"
	"errors"
)

// HotLoopKind is the first byte of a record of the hot group's loop topic (Names.Loop(HotGroup)):
// what the record carries. It doubles as the format's version: a new layout gets a new kind, and
// a reader refuses kinds it does not know.
type HotLoopKind byte

// The kinds of loop record, each keyed so that it lands in the partition that needs it.
const (
	// HotLoopTerm is a search term (key = the normalised term): its event time and where it came
	// from (input partition and offset, to drop the copies a replay of the input writes again).
	HotLoopTerm HotLoopKind = 1
	// HotLoopMarker is a watermark marker (key = a key of the target partition): an input
	// partition's largest event time so far.
	HotLoopMarker HotLoopKind = 2
)

// HotLoopRecordLen is the size of every loop record: kind, then Ms (int64), Partition (int32)
// and Offset (int64), little-endian.
const HotLoopRecordLen = 1 + 8 + 4 + 8

// ErrBadHotLoopRecord is the error of a loop record that is not exactly HotLoopRecordLen bytes
// of a known kind.
var ErrBadHotLoopRecord = errors.New("hot: malformed loop record")

// HotLoopRecord is the value of a record of the hot group's loop topic.
type HotLoopRecord struct {
	Kind HotLoopKind
	// Ms is the term's event time (HotLoopTerm) or the watermark (HotLoopMarker), Unix ms.
	Ms int64
	// Partition is the input partition the term or the watermark comes from.
	Partition int32
	// Offset is the term's input offset (0 in a marker).
	Offset int64
}

// Encode returns the record's HotLoopRecordLen bytes.
func (r HotLoopRecord) Encode() []byte {
	b := make([]byte, HotLoopRecordLen)
	b[0] = byte(r.Kind)
	binary.LittleEndian.PutUint64(b[1:], uint64(r.Ms))
	binary.LittleEndian.PutUint32(b[9:], uint32(r.Partition))
	binary.LittleEndian.PutUint64(b[13:], uint64(r.Offset))
	return b
}

// DecodeHotLoopRecord reads a record written by Encode; anything else fails with
// ErrBadHotLoopRecord.
func DecodeHotLoopRecord(b []byte) (HotLoopRecord, error) {
	if len(b) != HotLoopRecordLen || (HotLoopKind(b[0]) != HotLoopTerm && HotLoopKind(b[0]) != HotLoopMarker) {
		return HotLoopRecord{}, ErrBadHotLoopRecord
	}
	return HotLoopRecord{
		Kind:      HotLoopKind(b[0]),
		Ms:        int64(binary.LittleEndian.Uint64(b[1:])),
		Partition: int32(binary.LittleEndian.Uint32(b[9:])),
		Offset:    int64(binary.LittleEndian.Uint64(b[13:])),
	}, nil
}
