package topics

import "testing"

// BenchmarkDecodeSearchQuery: a query of loadgen's shape through DecodeSearchQuery (scan) and
// through the JSON decoder alone (json, the path of any other shape).
func BenchmarkDecodeSearchQuery(b *testing.B) {
	v := []byte(`{"query":"  Black Friday  Deals ","ts":1796040000000,"user_id":"u123456"}`)
	benchScanAndJSON(b, func(scan bool) error {
		_, _, err := decodeSearchQuery("u123456", v, searchRecordTime, scan)
		return err
	})
}
