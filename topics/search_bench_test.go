package topics

import "testing"

// BenchmarkDecodeSearchQuery: a query of loadgen's shape through DecodeSearchQuery (scan) and
// through the JSON decoder alone (json, the path of any other shape).
func BenchmarkDecodeSearchQuery(b *testing.B) {
	v := []byte(`{"query":"  Black Friday  Deals ","ts":1796040000000,"user_id":"u123456"}`)
	for _, bb := range []struct {
		name string
		scan bool
	}{{"scan", true}, {"json", false}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := decodeSearchQuery("u123456", v, searchRecordTime, bb.scan); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
