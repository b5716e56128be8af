package web

import (
	"slices"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
)

func mustBoard(t *testing.T, s board.Spec) *board.Board {
	t.Helper()
	b, err := board.NewBoard(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCatalogPeriods checks the current and previous period of every kind, in the board's
// zone, across a year's end, and for seasons before, between, in and after them.
func TestCatalogPeriods(t *testing.T) {
	arena := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"h", "d", "w", "m", "total"}, TZ: "Asia/Shanghai"})
	league := mustBoard(t, board.Spec{Name: "league", Periods: []string{"season"}, TZ: "UTC", Seasons: []board.SeasonSpec{
		{Name: "s1", Start: "2026-01-01", End: "2026-02-01"}, {Name: "s2", Start: "2026-03-01", End: "2026-04-01"}}})
	// 2026-12-31 16:30 UTC is 2027-01-01 00:30 in Shanghai, a Friday of ISO week 2026W53.
	now := time.Date(2026, 12, 31, 16, 30, 0, 0, time.UTC)
	c := Catalog([]*board.Board{arena}, nil, now)
	if c.Scopes == nil || len(c.Boards) != 2 || c.Boards[0].Name != "steps" {
		t.Fatalf("catalog %+v", c)
	}
	if got, want := c.Boards[0].Periods, []PeriodInfo{{"d", "d:20261231", "d:20261230"}}; !slices.Equal(got, want) {
		t.Errorf("steps: %v, want %v", got, want)
	}
	want := []PeriodInfo{{"h", "h:2027010100", "h:2026123123"}, {"d", "d:20270101", "d:20261231"},
		{"w", "w:2026W53", "w:2026W52"}, {"m", "m:202701", "m:202612"}, {"total", "total", ""}}
	if got := c.Boards[1].Periods; !slices.Equal(got, want) {
		t.Errorf("arena: %v, want %v", got, want)
	}
	for _, tc := range []struct {
		now  time.Time
		want PeriodInfo
	}{
		{time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), PeriodInfo{"season", "", ""}},
		{time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), PeriodInfo{"season", "season:s1", ""}},
		{time.Date(2026, 2, 15, 0, 0, 0, 0, time.UTC), PeriodInfo{"season", "", "season:s1"}},
		{time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC), PeriodInfo{"season", "season:s2", "season:s1"}},
		{time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), PeriodInfo{"season", "", "season:s2"}},
	} {
		if got := Catalog([]*board.Board{league}, []string{"eu"}, tc.now).Boards[1].Periods; !slices.Equal(got, []PeriodInfo{tc.want}) {
			t.Errorf("league at %s: %v, want %v", tc.now, got, tc.want)
		}
	}
}
