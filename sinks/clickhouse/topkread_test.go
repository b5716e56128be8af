package clickhouse

import (
	"slices"
	"testing"
	"time"
)

// TestTopKAtReadsTheSnapshotInEffect writes three windows, one of them twice (a recomputation
// missing a partition, then the complete one): TopKAt answers, for a time, the latest window
// ended by then, its first k ranks with the winning version, and nothing before the first.
func TestTopKAtReadsTheSnapshotInEffect(t *testing.T) {
	s, _ := migrated(t)
	ctx := testContext(t)
	gen := day0.Add(11 * time.Hour)
	complete, err := TopKVersion(MaxTopKCompleteness, gen)
	if err != nil {
		t.Fatal(err)
	}
	missingTwo, err := TopKVersion(MaxTopKCompleteness-2, gen.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var rows []TopKRow
	rows = append(rows, snapshot("search", windowEnd(0), complete, "a", "b", "c")...)
	rows = append(rows, snapshot("search", windowEnd(1), missingTwo, "x", "y")...)
	rows = append(rows, snapshot("other", windowEnd(1), complete, "o")...)
	rows = append(rows, snapshot("search", windowEnd(2), missingTwo, "p", "q", "r")...)
	if err := s.WriteTopK(ctx, rows); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteTopK(ctx, snapshot("search", windowEnd(2), complete, "d", "e", "f")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at      time.Time
		k       int
		items   []string
		end     time.Time
		missing int64
	}{
		{windowEnd(0).Add(-time.Second), 10, nil, time.Time{}, 0},
		{windowEnd(0), 10, []string{"a", "b", "c"}, windowEnd(0), 0},
		{windowEnd(1).Add(-time.Second), 2, []string{"a", "b"}, windowEnd(0), 0},
		{windowEnd(1).Add(4 * time.Second), 10, []string{"x", "y"}, windowEnd(1), 2},
		{windowEnd(2).Add(time.Hour), 10, []string{"d", "e", "f"}, windowEnd(2), 0},
	} {
		got, err := s.TopKAt(ctx, "search", tc.at, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		var items []string
		for _, r := range got {
			items = append(items, r.Item)
			if r.MissingPartitions() != tc.missing || !r.WindowEnd.Equal(tc.end) {
				t.Errorf("at %s: row %+v: missing %d, want %d; window end want %s", tc.at, r, r.MissingPartitions(), tc.missing, tc.end)
			}
		}
		if !slices.Equal(items, tc.items) {
			t.Errorf("at %s k %d: items %v, want %v", tc.at, tc.k, items, tc.items)
		}
		if len(got) > 0 && (!got[0].GeneratedAt().Equal(gen) && !got[0].GeneratedAt().Equal(gen.Add(time.Second))) {
			t.Errorf("at %s: generated at %s, want %s or a second later", tc.at, got[0].GeneratedAt(), gen)
		}
	}
}
