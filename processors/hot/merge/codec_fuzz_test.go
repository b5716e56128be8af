package merge

import (
	"reflect"
	"testing"

	"github.com/rankstream/rankstream/topics"
)

// FuzzMergeCodecs: the merge group's codecs (hot.partials records, its table's JSON) never
// panic, and a partial that decodes encodes to what decodes to the same partial.
func FuzzMergeCodecs(f *testing.F) {
	p, _ := topics.HotPartialCodec{}.Encode(&topics.HotPartial{Partition: 1, WindowStart: 1, WindowEnd: 5001, Items: []topics.PartialItem{{Item: "a", Count: 2, Error: 1}}})
	f.Add(p)
	f.Add([]byte(`{"partials":{"0":{"partition":0,"items":null}},"published":[1,2]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = pendingCodec{}.Decode(b)
		v, err := topics.HotPartialCodec{}.Decode(b)
		if err != nil {
			return
		}
		enc, err := topics.HotPartialCodec{}.Encode(v)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", v, err)
		}
		again, err := topics.HotPartialCodec{}.Decode(enc)
		if err != nil || !reflect.DeepEqual(v, again) {
			t.Fatalf("%q → %+v → %s → %+v (%v)", b, v, enc, again, err)
		}
	})
}
