package clickhouse

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkWriteTopK inserts batches of 10,000 topk_history rows (100 snapshots of a
// Top-100) into the real server and reports rows per second.
func BenchmarkWriteTopK(b *testing.B) {
	const snapshots, k = 100, 100
	s, _ := migrated(b)
	ctx := testContext(b)
	rows := make([]TopKRow, 0, snapshots*k)
	for w := range snapshots {
		for r := range k {
			rows = append(rows, TopKRow{Stream: "search", Rank: uint32(r + 1), Item: fmt.Sprintf("query number %d", w*k+r),
				Count: uint64(100_000 - r), Error: 17, Version: 1})
		}
	}
	b.ReportAllocs()
	batches := 0
	for b.Loop() {
		// Every batch covers new windows, as the pipeline's do.
		for i := range rows {
			end := windowEnd(batches*snapshots + i/k)
			rows[i].WindowStart, rows[i].WindowEnd = end.Add(-time.Hour), end
		}
		if err := s.WriteTopK(ctx, rows); err != nil {
			b.Fatal(err)
		}
		batches++
	}
	b.ReportMetric(float64(batches*len(rows))/b.Elapsed().Seconds(), "rows/s")
}
