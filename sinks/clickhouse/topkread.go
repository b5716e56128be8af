package clickhouse

import (
	"context"
	"fmt"
	"time"
)

// TopKAt reads the snapshot of stream in effect at at from topk_history: the rows of ranks 1
// to k of the latest window ending at or before at (FINAL: each rank once, its latest
// version), by rank; none when no window of the stream ended by then. It serves the pages'
// time travel (rankstream serve --history), never the live read path.
func (s *Sink) TopKAt(ctx context.Context, stream string, at time.Time, k int) ([]TopKRow, error) {
	table := s.database + ".topk_history"
	q := `SELECT window_start, window_end, rank, item, count, error, version
FROM ` + table + ` FINAL
WHERE stream = ? AND rank <= ? AND window_end = (
  SELECT max(window_end) FROM ` + table + ` WHERE stream = ? AND window_end <= ?)
ORDER BY rank`
	rows, err := s.conn.Query(ctx, q, stream, uint32(max(k, 0)), stream, at.UTC().Truncate(time.Second))
	if err != nil {
		return nil, fmt.Errorf("clickhouse sink: topk_history at %s: %w", at.UTC().Format(time.RFC3339), err)
	}
	defer rows.Close()
	var out []TopKRow
	for rows.Next() {
		r := TopKRow{Stream: stream}
		if err := rows.Scan(&r.WindowStart, &r.WindowEnd, &r.Rank, &r.Item, &r.Count, &r.Error, &r.Version); err != nil {
			return nil, fmt.Errorf("clickhouse sink: topk_history at %s: scan: %w", at.UTC().Format(time.RFC3339), err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("clickhouse sink: topk_history at %s: %w", at.UTC().Format(time.RFC3339), err)
	}
	return out, nil
}

// MissingPartitions is how many partitions the snapshot of the row missed, read back from its
// version (TopKVersion); 0 for rows written before versions held completeness.
func (r *TopKRow) MissingPartitions() int64 {
	c := int64(r.Version >> topkTimeBits)
	if c == 0 {
		return 0
	}
	return MaxTopKCompleteness - c
}

// GeneratedAt is when the row's snapshot was computed, read back from its version.
func (r *TopKRow) GeneratedAt() time.Time {
	return time.UnixMilli(int64(r.Version & (1<<topkTimeBits - 1))).UTC()
}
