package topics

import (
	"encoding/binary"
	"errors"
	"testing"
)

var errBad = errors.New("bad")

func TestBinaryReaderRoundTrip(t *testing.T) {
	b := []byte{7}
	b = binary.AppendUvarint(b, 300)
	b = binary.AppendVarint(b, -5)
	b = AppendString(b, "héllo")
	b = binary.AppendUvarint(b, 2) // a count
	b = append(b, 1, 2)
	r := NewBinaryReader(b, errBad)
	if v := r.Byte(); v != 7 {
		t.Fatalf("Byte = %d", v)
	}
	if v := r.Uvarint(300); v != 300 {
		t.Fatalf("Uvarint = %d", v)
	}
	if v := r.Varint(); v != -5 {
		t.Fatalf("Varint = %d", v)
	}
	if v := r.String(16); v != "héllo" {
		t.Fatalf("String = %q", v)
	}
	if n := r.Count(2); n != 2 || string(r.Bytes(n)) != "\x01\x02" {
		t.Fatalf("Count = %d", n)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("Err = %v", err)
	}
}

func TestBinaryReaderFailsStickily(t *testing.T) {
	for name, read := range map[string]func(r *BinaryReader){
		"byte past the end":      func(r *BinaryReader) { r.Bytes(3); r.Byte() },
		"uvarint above its max":  func(r *BinaryReader) { r.Uvarint(1) },
		"count beyond the input": func(r *BinaryReader) { r.Count(1000) },
		"count above its max":    func(r *BinaryReader) { r.Count(1) },
		"string too long":        func(r *BinaryReader) { r.String(2) },
		"bytes past the end":     func(r *BinaryReader) { r.Bytes(4) },
		"a failed check":         func(r *BinaryReader) { r.Check(false); r.Bytes(3) },
	} {
		r := NewBinaryReader([]byte{3, 'a', 'b'}, errBad)
		read(r)
		if r.Err() != errBad {
			t.Errorf("%s: Err = %v, want the reader's error", name, r.Err())
		}
		if r.Byte() != 0 || r.Varint() != 0 || len(r.Bytes(2)) != 2 {
			t.Errorf("%s: reads after the failure must return zero values", name)
		}
	}
}

func TestBinaryReaderBytesLeftOverAreAnError(t *testing.T) {
	r := NewBinaryReader([]byte{3, 'a'}, errBad)
	r.Byte()
	if r.Err() != errBad {
		t.Fatalf("Err = %v with a byte not read, want the reader's error", r.Err())
	}
}
