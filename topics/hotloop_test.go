package topics

import (
	"bytes"
	"testing"
)

// FuzzDecodeLoopRecord: a loop record decodes only from its exact encoding.
func FuzzDecodeLoopRecord(f *testing.F) {
	f.Add(HotLoopRecord{Kind: HotLoopTerm, Ms: 1796040000000, Partition: 3, Offset: 42}.Encode())
	f.Add(HotLoopRecord{Kind: HotLoopMarker, Ms: -1, Partition: -1}.Encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeHotLoopRecord(b)
		if err != nil {
			return
		}
		if again := r.Encode(); !bytes.Equal(again, b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, r, again)
		}
	})
}
