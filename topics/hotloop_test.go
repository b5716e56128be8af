package topics

import (
	"bytes"
	"math"
	"reflect"
	"testing"
)

// FuzzDecodeLoopRecord: a loop record decodes only from its exact encoding, and a terms record
// decodes to what its writer was given.
func FuzzDecodeLoopRecord(f *testing.F) {
	f.Add(HotLoopRecord{Kind: HotLoopTerm, Ms: 1796040000000, Partition: 3, Offset: 42}.Encode())
	f.Add(HotLoopRecord{Kind: HotLoopMarker, Ms: -1, Partition: -1}.Encode())
	f.Add(HotLoopRecord{Kind: HotLoopIdle, Partition: 2, Offset: 77}.Encode())
	f.Add(HotLoopRecord{Kind: HotLoopTerms, Partition: 7, Terms: []HotLoopEntry{
		{"snow", 1796040000000, 0}, {"black friday", 1796039999000, 8}, {"snow", math.MinInt64, math.MaxInt64 - 1},
	}}.Encode())
	f.Add([]byte{})
	f.Add([]byte{byte(HotLoopTerms), 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeHotLoopRecord(b)
		if err != nil {
			return
		}
		if again := r.Encode(); !bytes.Equal(again, b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, r, again)
		}
		if r.Kind != HotLoopTerms {
			return
		}
		// The writer, fed the decoded terms one by one, writes the same bytes.
		var w HotLoopTermsWriter
		w.Reset(r.Partition, make([]byte, 3))
		for i, e := range r.Terms {
			if i > 0 && e.Offset <= r.Terms[i-1].Offset {
				t.Fatalf("%x: offsets not ascending: %+v", b, r.Terms)
			}
			w.Add(e.Term, e.Ms, e.Offset)
		}
		if w.Len() != len(r.Terms) || w.Size() != len(b) || !bytes.Equal(w.Bytes(), b) {
			t.Fatalf("%x: the writer wrote %x (%d terms)", b, w.Bytes(), w.Len())
		}
	})
}

// TestLoopTermsRefused: a terms record without terms, with an empty or too long term, offsets
// not ascending, a varint in a longer form than needed or bytes left over is refused.
func TestLoopTermsRefused(t *testing.T) {
	valid := HotLoopRecord{Kind: HotLoopTerms, Partition: 1, Terms: []HotLoopEntry{{"a", 5, 3}}}.Encode()
	long := make([]byte, MaxQueryBytes+1)
	for i := range long {
		long[i] = 'x'
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"no terms", valid[:5]},
		{"truncated", valid[:len(valid)-1]},
		{"a byte left over", append(bytes.Clone(valid), 0)},
		{"an empty term", append(bytes.Clone(valid[:5]), 0, 0, 1)},
		{"a term too long", append(append(append(bytes.Clone(valid[:5]), 0x81, 0x02), long...), 0, 1)},
		{"the same offset twice", append(bytes.Clone(valid), 1, 'b', 0, 0)},
		{"a length in a longer form", append(bytes.Clone(valid[:5]), 0x81, 0x00, 'a', 0, 1)},
		{"an offset delta in a longer form", append(bytes.Clone(valid[:5]), 1, 'a', 0, 0x81, 0x00)},
		{"an offset past int64", append(append(bytes.Clone(valid), 1, 'b', 0), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)},
	} {
		if r, err := DecodeHotLoopRecord(c.b); err == nil {
			t.Errorf("%s: %x decodes to %+v", c.name, c.b, r)
		}
	}
	if r, err := DecodeHotLoopRecord(valid); err != nil || !reflect.DeepEqual(r.Terms, []HotLoopEntry{{"a", 5, 3}}) {
		t.Fatalf("the valid record decodes to %+v, %v", r, err)
	}
}
