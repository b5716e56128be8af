package topics

import "testing"

// BenchmarkDecodeSearchQuery: a query of loadgen's shape through DecodeSearchQuery (scan) and
// through the JSON decoder alone (json, the path of any other shape).
func BenchmarkDecodeSearchQuery(b *testing.B) {
	v := []byte(`{"query":"  Black Friday  Deals ","ts":1796040000000,"user_id":"u123456"}`)
	benchScanAndJSON(b, func(scan bool) error {
		var q SearchQuery
		_, err := decodeSearchQuery("u123456", v, searchRecordTime, scan, &q)
		return err
	})
}

// BenchmarkDecodeSearchQueryShapes: DecodeSearchQuery, as the hot group calls it, on the
// shapes of loadgen's queries: a term as it is counted (most of them), a variant spelling
// (upper case, extra spaces) and a variant whose white space holds a tab, escaped in JSON.
func BenchmarkDecodeSearchQueryShapes(b *testing.B) {
	for _, bb := range []struct{ name, value string }{
		{"plain", `{"query":"pizza weather","ts":1796040000000,"user_id":"u123456"}`},
		{"variant", `{"query":"  Pizza  WEATHER ","ts":1796040000000,"user_id":"u123456"}`},
		{"tab", `{"query":"Pizza \t weather","ts":1796040000000,"user_id":"u123456"}`},
	} {
		b.Run(bb.name, func(b *testing.B) {
			v := []byte(bb.value)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := DecodeSearchQuery("u123456", v, searchRecordTime); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
