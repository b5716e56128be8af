package hot

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/rankstream/rankstream/sketch"
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

// FuzzMergeCodecs: the merge group's codecs (hot.partials records, its table's JSON) never
// panic, and a partial that decodes encodes to what decodes to the same partial.
func FuzzMergeCodecs(f *testing.F) {
	p, _ := partialCodec{}.Encode(&Partial{Partition: 1, WindowStart: 1, WindowEnd: 5001, Items: []sketch.Item{{Item: "a", Count: 2, Error: 1}}})
	f.Add(p)
	f.Add([]byte(`{"partials":{"0":{"partition":0,"items":null}},"published":[1,2]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = pendingCodec{}.Decode(b)
		v, err := partialCodec{}.Decode(b)
		if err != nil {
			return
		}
		enc, err := partialCodec{}.Encode(v)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", v, err)
		}
		again, err := partialCodec{}.Decode(enc)
		if err != nil || !reflect.DeepEqual(v, again) {
			t.Fatalf("%q → %+v → %s → %+v (%v)", b, v, enc, again, err)
		}
	})
}
