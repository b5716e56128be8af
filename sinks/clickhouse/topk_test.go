package clickhouse

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// day0 is the first day of the tests' windows.
var day0 = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)

// windowEnd returns the end of the i-th 5-second window after day0 10:00.
func windowEnd(i int) time.Time {
	return day0.Add(10*time.Hour + time.Duration(i)*5*time.Second)
}

// snapshot returns the rows of a one-hour window ending at end with the items in rank
// order, their counts descending by 10 from 10 per item.
func snapshot(stream string, end time.Time, version uint64, items ...string) []TopKRow {
	rows := make([]TopKRow, len(items))
	for i, item := range items {
		rows[i] = TopKRow{
			Stream: stream, WindowStart: end.Add(-time.Hour), WindowEnd: end,
			Rank: uint32(i + 1), Item: item, Count: uint64(10 * (len(items) - i)), Error: uint64(i),
			Version: version,
		}
	}
	return rows
}

// TestReplayedAndRetriedBatchesLeaveOneRowPerKey writes a batch twice (a replay), then a
// recomputation of one window whose first attempt got only partly in before it was retried:
// FINAL and argMax show every (stream, window_end, rank) once, with the latest values.
func TestReplayedAndRetriedBatchesLeaveOneRowPerKey(t *testing.T) {
	ctx := testContext(t)
	s, conn := migrated(t)

	first := slices.Concat(
		snapshot("search", windowEnd(0), 1000, "a", "b", "c", "d"),
		snapshot("search", windowEnd(1), 1005, "a", "c", "b", "d"),
	)
	recomputed := snapshot("search", windowEnd(1), 2000, "c", "e", "a", "b")
	for _, batch := range [][]TopKRow{first, first, recomputed[:2], recomputed} {
		if err := s.WriteTopK(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	want := slices.Concat(first[:4], recomputed)

	check := func(when string) {
		t.Helper()
		if n := count(t, conn, "SELECT count() FROM topk_history FINAL"); n != uint64(len(want)) {
			t.Errorf("%s: count() FINAL = %d, want %d", when, n, len(want))
		}
		if got := readTopK(t, conn, "SELECT * FROM topk_history FINAL ORDER BY stream, window_end, rank"); !slices.Equal(got, want) {
			t.Errorf("%s: FINAL rows:\n%v\nwant:\n%v", when, got, want)
		}
		// Aliases must differ from column names: ClickHouse would substitute them into
		// the other aggregates.
		got := readTopK(t, conn, `SELECT stream, argMax(window_start, version) AS last_start, window_end, rank,
			argMax(item, version) AS last_item, argMax(count, version) AS last_count,
			argMax(error, version) AS last_error, max(version) AS last_version
			FROM topk_history GROUP BY stream, window_end, rank ORDER BY stream, window_end, rank`)
		if !slices.Equal(got, want) {
			t.Errorf("%s: argMax rows:\n%v\nwant:\n%v", when, got, want)
		}
	}
	check("before merging")
	exec(t, conn, "OPTIMIZE TABLE topk_history FINAL")
	check("after OPTIMIZE FINAL")
	if n := count(t, conn, "SELECT count() FROM topk_history"); n != uint64(len(want)) {
		t.Errorf("after OPTIMIZE FINAL: %d rows stored, want %d", n, len(want))
	}
}

// readTopK runs a query returning topk_history's columns in their order.
func readTopK(t *testing.T, conn driver.Conn, query string) []TopKRow {
	t.Helper()
	rows, err := conn.Query(testContext(t), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var out []TopKRow
	for rows.Next() {
		var r TopKRow
		if err := rows.Scan(&r.Stream, &r.WindowStart, &r.WindowEnd, &r.Rank, &r.Item, &r.Count, &r.Error, &r.Version); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		r.WindowStart, r.WindowEnd = r.WindowStart.UTC(), r.WindowEnd.UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return out
}

// TestWriteTopKRejectsInvalidRows: a batch with one bad row writes nothing, and the error
// is not retryable.
func TestWriteTopKRejectsInvalidRows(t *testing.T) {
	ctx := testContext(t)
	s, conn := migrated(t)
	for name, spoil := range map[string]func(*TopKRow){
		"sub-second end":   func(r *TopKRow) { r.WindowEnd = r.WindowEnd.Add(500 * time.Millisecond) },
		"sub-second start": func(r *TopKRow) { r.WindowStart = r.WindowStart.Add(time.Millisecond) },
		"rank 0":           func(r *TopKRow) { r.Rank = 0 },
		"empty stream":     func(r *TopKRow) { r.Stream = "" },
		"end before start": func(r *TopKRow) { r.WindowStart = r.WindowEnd.Add(time.Hour) },
		"before 1970":      func(r *TopKRow) { r.WindowStart = time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC) },
		"zero time":        func(r *TopKRow) { r.WindowStart, r.WindowEnd = time.Time{}, time.Time{}.Add(time.Hour) },
	} {
		rows := snapshot("search", windowEnd(0), 1, "a", "b", "c")
		spoil(&rows[2])
		err := s.WriteTopK(ctx, rows)
		if !errors.Is(err, ErrInvalidRow) || IsRetryable(err) {
			t.Errorf("%s: WriteTopK = %v, want a non-retryable ErrInvalidRow", name, err)
		}
	}
	if n := count(t, conn, "SELECT count() FROM topk_history"); n != 0 {
		t.Errorf("%d rows written by rejected batches", n)
	}
}
