package hot

import (
	"bytes"
	"testing"
)

// FuzzDecodeLoopRecord: a loop record decodes only from its exact encoding.
func FuzzDecodeLoopRecord(f *testing.F) {
	f.Add(loopRecord{kind: kindTerm, ms: 1796040000000, partition: 3, offset: 42}.encode())
	f.Add(loopRecord{kind: kindMarker, ms: -1, partition: -1}.encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		if again := r.encode(); !bytes.Equal(again, b) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", b, r, again)
		}
	})
}
