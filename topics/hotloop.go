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
	// HotLoopTerm is one search term (key = the normalised term): its event time and where it
	// came from (input partition and offset, to drop the copies a replay of the input writes
	// again). Written by versions before HotLoopTerms; still read, so that the records an
	// older version left in the loop topic are counted after an upgrade.
	HotLoopTerm HotLoopKind = 1
	// HotLoopMarker is a watermark marker (key = a key of the target partition): an input
	// partition's largest event time so far, and whether it reads at the head of its log
	// (Live; versions before it wrote 0 there, read as not live).
	HotLoopMarker HotLoopKind = 2
	// HotLoopTerms is many search terms of one input partition that belong to the same loop
	// partition (key = a key of that partition), in input offset order: each with its event
	// time and input offset. It replaces HotLoopTerm: one record per loop partition per flush
	// instead of one per query.
	HotLoopTerms HotLoopKind = 3
	// HotLoopIdle is an idle marker (key = a key of the target partition): input partition
	// Partition had nothing left to read, every query up to input offset Offset forwarded
	// before it, for the idle time. The loop partitions stop waiting for it until its next
	// marker or term. Ms is 0.
	HotLoopIdle HotLoopKind = 4
)

// HotLoopRecordLen is the size of every HotLoopTerm, HotLoopMarker and HotLoopIdle record: kind,
// then Ms (int64), Partition (int32) and Offset (int64), little-endian; a marker has its flags
// where the others have Offset (1: Live).
const HotLoopRecordLen = 1 + 8 + 4 + 8

// hotLoopMarkerLive is a marker's flag of HotLoopRecord.Live.
const hotLoopMarkerLive = 1

// hotLoopTermsHeader is the size of a HotLoopTerms record before its entries: kind and Partition
// (int32, little-endian).
const hotLoopTermsHeader = 1 + 4

// ErrBadHotLoopRecord is the error of a loop record that is not one of a known kind in its exact
// encoding.
var ErrBadHotLoopRecord = errors.New("hot: malformed loop record")

// HotLoopRecord is the value of a record of the hot group's loop topic.
type HotLoopRecord struct {
	Kind HotLoopKind
	// Ms is the term's event time (HotLoopTerm) or the watermark (HotLoopMarker), Unix ms; 0 in
	// HotLoopTerms.
	Ms int64
	// Partition is the input partition the terms or the watermark come from.
	Partition int32
	// Offset is the term's input offset (HotLoopTerm), the input offset before which every
	// query was forwarded (HotLoopIdle); 0 otherwise.
	Offset int64
	// Terms are the terms of a HotLoopTerms record (at least one), by input offset ascending.
	Terms []HotLoopEntry
	// Live is a HotLoopMarker's word that its input partition had read, at its instance's last
	// look, everything its log held at the look before: it reads at the head of its log.
	Live bool
}

// HotLoopEntry is one search query in a HotLoopTerms record.
type HotLoopEntry struct {
	Term   string // normalised
	Ms     int64  // event time, Unix ms
	Offset int64  // input offset
}

// Encode returns the record's bytes: HotLoopRecordLen bytes for HotLoopTerm, HotLoopMarker and
// HotLoopIdle,
// a HotLoopTermsWriter's record for HotLoopTerms (which needs at least one term, each of them
// at an input offset above the one before it).
func (r HotLoopRecord) Encode() []byte {
	if r.Kind == HotLoopTerms {
		var w HotLoopTermsWriter
		w.Reset(r.Partition, nil)
		for _, t := range r.Terms {
			w.Add(t.Term, t.Ms, t.Offset)
		}
		return w.Bytes()
	}
	b := make([]byte, HotLoopRecordLen)
	b[0] = byte(r.Kind)
	binary.LittleEndian.PutUint64(b[1:], uint64(r.Ms))
	binary.LittleEndian.PutUint32(b[9:], uint32(r.Partition))
	tail := uint64(r.Offset)
	if r.Kind == HotLoopMarker {
		tail = 0
		if r.Live {
			tail = hotLoopMarkerLive
		}
	}
	binary.LittleEndian.PutUint64(b[13:], tail)
	return b
}

// HotLoopTermsWriter builds a HotLoopTerms record term by term, without allocating beyond its
// buffer's growth. Its layout: the kind byte, Partition (int32, little-endian), then per term
// its length (uvarint), its bytes, its event time less the previous term's (varint, wrapping;
// the first one less 0) and its input offset less the previous term's (uvarint, at least 1; the
// first one less -1).
type HotLoopTermsWriter struct {
	b                  []byte
	prevMs, prevOffset int64
	n                  int
}

// Reset starts a record of input partition's terms in buf's memory (nil: new memory).
func (w *HotLoopTermsWriter) Reset(partition int32, buf []byte) {
	w.b = binary.LittleEndian.AppendUint32(append(buf[:0], byte(HotLoopTerms)), uint32(partition))
	w.prevMs, w.prevOffset, w.n = 0, -1, 0
}

// Add appends a term (normalised, 1 to MaxQueryBytes bytes) at event time ms and input offset,
// which must be above the previous term's.
func (w *HotLoopTermsWriter) Add(term string, ms, offset int64) {
	w.b = AppendString(w.b, term)
	w.b = binary.AppendVarint(w.b, ms-w.prevMs)
	w.b = binary.AppendUvarint(w.b, uint64(offset-w.prevOffset))
	w.prevMs, w.prevOffset = ms, offset
	w.n++
}

// Len is the number of terms added since Reset.
func (w *HotLoopTermsWriter) Len() int { return w.n }

// Size is the record's size in bytes so far.
func (w *HotLoopTermsWriter) Size() int { return len(w.b) }

// Bytes returns the record (it aliases the writer's buffer until the next Reset).
func (w *HotLoopTermsWriter) Bytes() []byte { return w.b }

// DecodeHotLoopRecord reads a record written by Encode (or a HotLoopTermsWriter); anything else,
// including a varint longer than needed, fails with ErrBadHotLoopRecord. The terms of a
// HotLoopTerms record share one string's memory.
func DecodeHotLoopRecord(b []byte) (HotLoopRecord, error) {
	if len(b) == 0 {
		return HotLoopRecord{}, ErrBadHotLoopRecord
	}
	switch kind := HotLoopKind(b[0]); kind {
	case HotLoopTerm, HotLoopMarker, HotLoopIdle:
		if len(b) != HotLoopRecordLen {
			return HotLoopRecord{}, ErrBadHotLoopRecord
		}
		r := HotLoopRecord{
			Kind:      kind,
			Ms:        int64(binary.LittleEndian.Uint64(b[1:])),
			Partition: int32(binary.LittleEndian.Uint32(b[9:])),
			Offset:    int64(binary.LittleEndian.Uint64(b[13:])),
		}
		if kind == HotLoopMarker {
			if uint64(r.Offset)&^hotLoopMarkerLive != 0 {
				return HotLoopRecord{}, ErrBadHotLoopRecord
			}
			r.Live, r.Offset = r.Offset == hotLoopMarkerLive, 0
		}
		return r, nil
	case HotLoopTerms:
		return decodeHotLoopTerms(b)
	}
	return HotLoopRecord{}, ErrBadHotLoopRecord
}

// decodeHotLoopTerms reads a HotLoopTerms record (see HotLoopTermsWriter).
func decodeHotLoopTerms(b []byte) (HotLoopRecord, error) {
	if len(b) <= hotLoopTermsHeader {
		return HotLoopRecord{}, ErrBadHotLoopRecord
	}
	// One string holds every term: one allocation per record, not one per term. A first pass
	// checks the whole record and counts its terms, so that nothing is decoded from a bad one
	// and the terms' slice is allocated once, at its size.
	s := string(b[hotLoopTermsHeader:])
	n := walkHotLoopTerms(s, nil)
	if n == 0 {
		return HotLoopRecord{}, ErrBadHotLoopRecord
	}
	r := HotLoopRecord{Kind: HotLoopTerms, Partition: int32(binary.LittleEndian.Uint32(b[1:])), Terms: make([]HotLoopEntry, 0, n)}
	walkHotLoopTerms(s, func(e HotLoopEntry) { r.Terms = append(r.Terms, e) })
	return r, nil
}

// walkHotLoopTerms calls fn (if not nil) with each term of a HotLoopTerms record's terms s and
// returns their number, or 0 when s is not a valid list of at least one term.
func walkHotLoopTerms(s string, fn func(HotLoopEntry)) int {
	n, ms, offset := 0, int64(0), int64(-1)
	for i := 0; i < len(s); n++ {
		l, k := uvarint(s[i:])
		if k == 0 || l == 0 || l > MaxQueryBytes || uint64(len(s)-i-k) < l {
			return 0
		}
		i += k
		term := s[i : i+int(l)]
		i += int(l)
		dms, k := uvarint(s[i:])
		if k == 0 {
			return 0
		}
		i += k
		doff, k := uvarint(s[i:])
		if k == 0 || doff == 0 || offset+int64(doff) < offset {
			return 0
		}
		i += k
		ms += int64(dms>>1) ^ -int64(dms&1) // zigzag, as binary.Varint
		offset += int64(doff)
		if fn != nil {
			fn(HotLoopEntry{Term: term, Ms: ms, Offset: offset})
		}
	}
	return n
}

// uvarint reads an unsigned varint from the start of s and returns it and its length; the length
// is 0 when s does not start with one in its shortest form (the only form a writer produces).
func uvarint(s string) (uint64, int) {
	var v uint64
	for i := 0; i < len(s) && i < binary.MaxVarintLen64; i++ {
		c := s[i]
		if i == binary.MaxVarintLen64-1 && c > 1 {
			return 0, 0 // overflows 64 bits
		}
		v |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			if c == 0 && i > 0 {
				return 0, 0 // a longer form than needed
			}
			return v, i + 1
		}
	}
	return 0, 0
}
