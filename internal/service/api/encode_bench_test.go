package api

import (
	"encoding/json"
	"io"
	"strconv"
	"testing"
	"time"
)

func top100() BoardPage {
	p := BoardPage{Board: "arena", Period: "total", Scope: "global", Total: 1_000_000}
	for i := range 100 {
		p.Items = append(p.Items, Entry{Rank: int64(i + 1), Member: "m" + strconv.Itoa(1_000_000+i), Score: int64(1_000_000 - i),
			ReachedAt: time.UnixMilli(1_700_000_000_000 + int64(i)*7919).UTC()})
	}
	return p
}

// BenchmarkTop100JSON: a top-100 answer by the hand-written encoder and by encoding/json.
func BenchmarkTop100JSON(b *testing.B) {
	p := top100()
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for range b.N {
			buf = append(p.appendJSON(buf[:0]), '\n')
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = json.NewEncoder(io.Discard).Encode(p)
		}
	})
}
