package topics

import "testing"

func BenchmarkDecodeSearchQuery(b *testing.B) {
	v := []byte(`{"query":"  Black Friday  Deals ","ts":1796040000000,"user_id":"u123456"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeSearchQuery("u123456", v, searchRecordTime); err != nil {
			b.Fatal(err)
		}
	}
}
