package topics

import "encoding/binary"

// BinaryReader reads the varint-based binary encodings of rankstream's group-table states: a
// decoder calls its reads in the order the encoder appended, checks invariants with Check, and
// looks at Err once at the end. The first failure is sticky: the reads after it return zero
// values (Bytes returns zeroed bytes of the asked length), so a decoder needs no error check
// between reads and never panics on garbage.
type BinaryReader struct {
	b   []byte
	err error
	bad error // what a failure reports
}

// NewBinaryReader reads b; a failure reports bad (e.g. the state's ErrCorrupt sentinel).
func NewBinaryReader(b []byte, bad error) *BinaryReader { return &BinaryReader{b: b, bad: bad} }

// Check fails the reader unless ok.
func (r *BinaryReader) Check(ok bool) {
	if !ok && r.err == nil {
		r.err, r.b = r.bad, nil
	}
}

// Err is the failure, or nil if every read and check succeeded and every byte was read.
func (r *BinaryReader) Err() error {
	if r.err == nil && len(r.b) != 0 {
		return r.bad
	}
	return r.err
}

// Byte reads one byte.
func (r *BinaryReader) Byte() byte {
	if r.Check(len(r.b) >= 1); r.err != nil {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

// Uvarint reads an unsigned varint of at most max.
func (r *BinaryReader) Uvarint(max uint64) uint64 {
	v, n := binary.Uvarint(r.b)
	if r.Check(n > 0 && v <= max); r.err != nil {
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Count reads the length of a list of at most max items, each of which takes at least one
// byte of what is left (so a forged length cannot make the decoder allocate much).
func (r *BinaryReader) Count(max uint64) int {
	v, n := binary.Uvarint(r.b)
	if r.Check(n > 0 && v <= max && v <= uint64(len(r.b)-n)); r.err != nil {
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// Varint reads a signed varint.
func (r *BinaryReader) Varint() int64 {
	v, n := binary.Varint(r.b)
	if r.Check(n > 0); r.err != nil {
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Bytes reads n bytes; they alias the input.
func (r *BinaryReader) Bytes(n int) []byte {
	if r.Check(n >= 0 && len(r.b) >= n); r.err != nil {
		return make([]byte, max(n, 0))
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// String reads a string of at most max bytes written by AppendString.
func (r *BinaryReader) String(max uint64) string { return string(r.Bytes(int(r.Uvarint(max)))) }

// AppendString appends s as its length (uvarint) and its bytes, for BinaryReader.String.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
