package hot

import (
	"encoding/binary"
	"errors"
)

// The loop topic carries two kinds of record, both keyed so that they land in the partition
// that needs them:
//   - a term (key = the normalised term): its event time and where it came from (input
//     partition and offset, to drop the copies a replay of the input writes again);
//   - a watermark marker (key = a key of the target partition): an input partition's largest
//     event time so far.
const (
	kindTerm   byte = 1
	kindMarker byte = 2
	recordLen       = 1 + 8 + 4 + 8
)

var errBadRecord = errors.New("hot: malformed loop record")

type loopRecord struct {
	kind      byte
	ms        int64 // event time (term) or watermark (marker), epoch ms
	partition int32 // input partition
	offset    int64 // input offset (term only)
}

func (r loopRecord) encode() []byte {
	b := make([]byte, recordLen)
	b[0] = r.kind
	binary.LittleEndian.PutUint64(b[1:], uint64(r.ms))
	binary.LittleEndian.PutUint32(b[9:], uint32(r.partition))
	binary.LittleEndian.PutUint64(b[13:], uint64(r.offset))
	return b
}

func decodeRecord(b []byte) (loopRecord, error) {
	if len(b) != recordLen || (b[0] != kindTerm && b[0] != kindMarker) {
		return loopRecord{}, errBadRecord
	}
	return loopRecord{
		kind:      b[0],
		ms:        int64(binary.LittleEndian.Uint64(b[1:])),
		partition: int32(binary.LittleEndian.Uint32(b[9:])),
		offset:    int64(binary.LittleEndian.Uint64(b[13:])),
	}, nil
}
