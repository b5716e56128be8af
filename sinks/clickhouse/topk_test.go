package clickhouse

import (
	"errors"
	"fmt"
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

// version is TopKVersion of a snapshot generated at ms that missed missing partitions.
func version(t *testing.T, missing int, ms int64) uint64 {
	t.Helper()
	v, err := TopKVersion(MaxTopKCompleteness-int64(missing), time.UnixMilli(ms))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTopKVersionOrder: fewer missing partitions win whatever the generation time; then the
// later generation; versions written before missing partitions existed (the generation time
// alone) lose to all.
func TestTopKVersionOrder(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).UnixMilli()
	ascending := []uint64{
		uint64(time.Date(2500, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()), // an old-style version
		version(t, MaxTopKCompleteness-1, 0),
		version(t, 3, now+60_000),
		version(t, 1, now),
		version(t, 1, now+1),
		version(t, 0, 0),
		version(t, 0, now),
		version(t, 0, 1<<44-1),
	}
	for i := 1; i < len(ascending); i++ {
		if ascending[i-1] >= ascending[i] {
			t.Errorf("version %d (%#x) not below %d (%#x)", i-1, ascending[i-1], i, ascending[i])
		}
	}
	for _, bad := range []struct {
		completeness int64
		at           time.Time
	}{
		{MaxTopKCompleteness + 1, time.UnixMilli(now)},
		{0, time.UnixMilli(now)},
		{-5, time.UnixMilli(now)},
		{MaxTopKCompleteness, time.UnixMilli(-1)},
		{MaxTopKCompleteness, time.UnixMilli(1 << 44)},
	} {
		if _, err := TopKVersion(bad.completeness, bad.at); !errors.Is(err, ErrInvalidRow) {
			t.Errorf("TopKVersion(%d, %s) = %v, want ErrInvalidRow", bad.completeness, bad.at, err)
		}
	}
}

// TestIncompleteSnapshotNeverSupersedesComplete: under FINAL and argMax a window shows the
// snapshot missing the fewest partitions, the latest of those; an incomplete snapshot written
// after the complete one (a late publisher) changes nothing, and the complete one replayed
// collapses into the same rows. TopKMissingSQL and TopKGeneratedAtSQL read the version back.
func TestIncompleteSnapshotNeverSupersedesComplete(t *testing.T) {
	ctx := testContext(t)
	s, conn := migrated(t)
	const t0 = 1796040000000 // 2026-11-30 12:00:00 UTC, in ms
	complete := snapshot("search", windowEnd(0), version(t, 0, t0+2000), "c", "a", "b")
	lateComplete := snapshot("search", windowEnd(1), version(t, 1, t0+900), "y", "x")
	newOverOld := snapshot("search", windowEnd(2), version(t, 2, t0), "n")
	for _, batch := range [][]TopKRow{
		snapshot("search", windowEnd(0), version(t, 1, t0+1000), "a", "b"), // published after the wait
		complete, // the late partial arrived
		snapshot("search", windowEnd(0), version(t, 1, t0+3000), "a", "b"),      // a stale incomplete one, late
		snapshot("search", windowEnd(0), version(t, 0, t0+4000), "c", "a", "b"), // the complete one replayed
		snapshot("search", windowEnd(1), version(t, 2, t0+1000), "x"),
		lateComplete, // fewer missing, generated earlier (another instance's clock)
		snapshot("search", windowEnd(2), t0+9_000_000, "old"), // written before missing partitions existed
		newOverOld,
	} {
		if err := s.WriteTopK(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	// The replay collapses into the first complete rows: same content, only the version differs.
	replayed := slices.Clone(complete)
	for i := range replayed {
		replayed[i].Version = version(t, 0, t0+4000)
	}
	want := slices.Concat(replayed, lateComplete, newOverOld)
	if got := readTopK(t, conn, "SELECT * FROM topk_history FINAL ORDER BY stream, window_end, rank"); !slices.Equal(got, want) {
		t.Errorf("FINAL rows:\n%v\nwant:\n%v", got, want)
	}
	got := readTopK(t, conn, `SELECT stream, argMax(window_start, version) AS last_start, window_end, rank,
		argMax(item, version) AS last_item, argMax(count, version) AS last_count,
		argMax(error, version) AS last_error, max(version) AS last_version
		FROM topk_history GROUP BY stream, window_end, rank ORDER BY stream, window_end, rank`)
	if !slices.Equal(got, want) {
		t.Errorf("argMax rows:\n%v\nwant:\n%v", got, want)
	}
	var decoded []struct {
		Missing     int64  `ch:"missing"`
		GeneratedAt uint64 `ch:"generated_at"`
	}
	if err := conn.Select(ctx, &decoded, "SELECT "+TopKMissingSQL+" AS missing, "+TopKGeneratedAtSQL+
		" AS generated_at FROM topk_history FINAL WHERE rank = 1 ORDER BY window_end"); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(decoded) != fmt.Sprintf("[{0 %d} {1 %d} {2 %d}]", t0+4000, t0+900, t0) {
		t.Errorf("missing partitions and generation times read from the versions: %v", decoded)
	}
}
