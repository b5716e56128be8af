package topics

import (
	"testing"
	"time"
)

func BenchmarkDecodeStepReport(b *testing.B) {
	v := []byte(`{"request_id":"r1-2f3k","user_id":"u123456","device_id":"d-u123456","steps":12345,"ts":1796040000000,"tz":"Asia/Shanghai","region":"cn-east"}`)
	rec := time.UnixMilli(1796040000000)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeStepReport("u123456", v, rec, DefaultStepRules); err != nil {
			b.Fatal(err)
		}
	}
}
