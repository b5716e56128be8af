package topics

import (
	"testing"
	"time"
)

// BenchmarkDecodeStepReport: a report of loadgen's shape through DecodeStepReport (scan) and
// through the JSON decoder alone (json, the path of any other shape).
func BenchmarkDecodeStepReport(b *testing.B) {
	v := []byte(`{"request_id":"r1-2f3k","user_id":"u123456","device_id":"d-u123456","steps":12345,"ts":1796040000000,"tz":"Asia/Shanghai","region":"cn-east"}`)
	rec := time.UnixMilli(1796040000000)
	benchScanAndJSON(b, func(scan bool) error {
		_, _, err := decodeStepReport("u123456", v, rec, DefaultStepRules, scan)
		return err
	})
}

// benchScanAndJSON runs decode through the scanner of the common shape (scan) and through the
// JSON decoder alone (json).
func benchScanAndJSON(b *testing.B, decode func(scan bool) error) {
	for _, bb := range []struct {
		name string
		scan bool
	}{{"scan", true}, {"json", false}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := decode(bb.scan); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
