package board

import (
	"errors"
	"strings"
	"testing"
)

func TestParsePeriod(t *testing.T) {
	for _, tc := range []struct {
		s    string
		kind Period
		id   string
		err  error
	}{
		{"d", PeriodDay, "", nil},
		{"h:2026113008", PeriodHour, "2026113008", nil},
		{"w:2026W49", PeriodWeek, "2026W49", nil},
		{"m:202611", PeriodMonth, "202611", nil},
		{"season:s1-b_2", PeriodSeason, "s1-b_2", nil},
		{"total", PeriodTotal, "", nil},
		{"season:" + strings.Repeat("s", 64), PeriodSeason, strings.Repeat("s", 64), nil},
		{"", "", "", ErrPeriodKind},
		{"year", "year", "", ErrPeriodKind},
		{"D", "D", "", ErrPeriodKind},
		{"x:1", "x", "1", ErrPeriodKind},
		{"d:", PeriodDay, "", ErrPeriodID},
		{"d:2026 11", PeriodDay, "2026 11", ErrPeriodID},
		{"d:2026:11", PeriodDay, "2026:11", ErrPeriodID},
		{"d:2026-11-29", PeriodDay, "2026-11-29", nil}, // an id of the right characters; no window of d has it
		{"season:" + strings.Repeat("s", 65), PeriodSeason, strings.Repeat("s", 65), ErrPeriodID},
	} {
		kind, id, err := ParsePeriod(tc.s)
		if kind != tc.kind || id != tc.id || !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("ParsePeriod(%q) = %q, %q, %v; want %q, %q, %v", tc.s, kind, id, err, tc.kind, tc.id, tc.err)
		}
	}
}
