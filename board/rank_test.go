package board

import (
	"errors"
	"math"
	"sort"
	"testing"
	"time"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func TestDayOfAcrossZones(t *testing.T) {
	tests := []struct {
		name string
		at   string
		zone string
		want Day
	}{
		{"UTC+14 is already tomorrow", "2026-11-30T12:00:00Z", "Pacific/Kiritimati", 20261201},
		{"UTC-11 is still today", "2026-11-30T12:00:00Z", "Pacific/Pago_Pago", 20261130},
		{"UTC-11 just before its midnight", "2026-12-01T10:59:59Z", "Pacific/Pago_Pago", 20261130},
		{"UTC-11 at its midnight", "2026-12-01T11:00:00Z", "Pacific/Pago_Pago", 20261201},
		{"UTC+14 at its midnight", "2026-11-30T10:00:00Z", "Pacific/Kiritimati", 20261201},
		{"UTC+14 just before its midnight", "2026-11-30T09:59:59.999Z", "Pacific/Kiritimati", 20261130},
		// New York springs forward on 2026-03-08: a 23-hour day from 05:00Z to 04:00Z.
		{"NY before the spring-forward day", "2026-03-08T04:59:59Z", "America/New_York", 20260307},
		{"NY spring-forward day starts", "2026-03-08T05:00:00Z", "America/New_York", 20260308},
		{"NY spring-forward day ends after 23 h", "2026-03-09T03:59:59Z", "America/New_York", 20260308},
		{"NY day after spring-forward", "2026-03-09T04:00:00Z", "America/New_York", 20260309},
		// New York falls back on 2026-11-01: a 25-hour day from 04:00Z to 05:00Z next day.
		{"NY fall-back day starts", "2026-11-01T04:00:00Z", "America/New_York", 20261101},
		{"NY fall-back day's 25th hour", "2026-11-02T04:30:00Z", "America/New_York", 20261101},
		{"NY day after fall-back", "2026-11-02T05:00:00Z", "America/New_York", 20261102},
		// Berlin springs forward on 2026-03-29 and falls back on 2026-10-25.
		{"Berlin spring-forward day starts", "2026-03-28T23:00:00Z", "Europe/Berlin", 20260329},
		{"Berlin spring-forward day ends after 23 h", "2026-03-29T21:59:59Z", "Europe/Berlin", 20260329},
		{"Berlin day after spring-forward", "2026-03-29T22:00:00Z", "Europe/Berlin", 20260330},
		{"Berlin fall-back day's 25th hour", "2026-10-25T22:30:00Z", "Europe/Berlin", 20261025},
		{"Berlin day after fall-back", "2026-10-25T23:00:00Z", "Europe/Berlin", 20261026},
		{"Shanghai", "2026-11-30T15:59:59Z", "Asia/Shanghai", 20261130},
		{"Shanghai midnight", "2026-11-30T16:00:00Z", "Asia/Shanghai", 20261201},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, err := time.Parse(time.RFC3339Nano, tt.at)
			if err != nil {
				t.Fatal(err)
			}
			if got := DayOf(at, mustZone(t, tt.zone)); got != tt.want {
				t.Fatalf("DayOf(%s, %s) = %v, want %v", tt.at, tt.zone, got, tt.want)
			}
			d := DayOf(at, mustZone(t, tt.zone))
			if at.Before(d.FirstInstant()) || !at.Before(d.LastInstant()) {
				t.Fatalf("%s outside the span of day %v: [%s, %s)", tt.at, d, d.FirstInstant(), d.LastInstant())
			}
		})
	}
}

func TestParseDay(t *testing.T) {
	for _, s := range []string{"2026113", "20261301", "2026-11-30", "x", ""} {
		if _, err := ParseDay(s); err == nil {
			t.Errorf("ParseDay(%q) accepted", s)
		}
	}
	d, err := ParseDay("20261130")
	if err != nil || d != 20261130 || d.AddDays(1) != 20261201 || d.AddDays(-30) != 20261031 {
		t.Fatalf("ParseDay: %v %v", d, err)
	}
}

func TestDayCompositeOrdersByScoreThenEarliestReach(t *testing.T) {
	day := Day(20261130)
	c := DayComposite(day)
	base := day.FirstInstant().UnixMilli()
	type entry struct {
		score, reached int64
	}
	entries := []entry{
		{0, base}, {0, base + 50*3600*1000 - 1}, {1, base + 1}, {1, base},
		{1000, base + 7}, {1000, base + 8}, {c.MaxScore(), base}, {c.MaxScore(), base + 50*3600*1000 - 1},
		{c.MaxScore() - 1, base},
	}
	encoded := make([]float64, len(entries))
	for i, e := range entries {
		v, err := c.Encode(e.score, e.reached)
		if err != nil {
			t.Fatalf("Encode(%d, %d): %v", e.score, e.reached, err)
		}
		if v >= 1<<53 || v != math.Trunc(v) {
			t.Fatalf("Encode(%d, %d) = %v: not an exact integer below 2^53", e.score, e.reached, v)
		}
		s, r := c.Decode(v)
		if s != e.score || r != e.reached {
			t.Fatalf("Decode(Encode(%d, %d)) = %d, %d", e.score, e.reached, s, r)
		}
		encoded[i] = v
	}
	idx := make([]int, len(entries))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return encoded[idx[a]] > encoded[idx[b]] })
	for k := 1; k < len(idx); k++ {
		hi, lo := entries[idx[k-1]], entries[idx[k]]
		if hi.score < lo.score || hi.score == lo.score && hi.reached > lo.reached {
			t.Fatalf("composite order wrong: %+v ranks above %+v", hi, lo)
		}
	}
}

func TestDayCompositeLimits(t *testing.T) {
	day := Day(20261130)
	c := DayComposite(day)
	if c.MaxScore() != 1<<25-1 {
		t.Fatalf("MaxScore = %d, want 2^25-1", c.MaxScore())
	}
	first := day.FirstInstant().UnixMilli()
	last := day.LastInstant().UnixMilli() - 1
	tests := []struct {
		score, reached int64
		want           error
	}{
		{-1, first, ErrScoreRange},
		{c.MaxScore() + 1, first, ErrScoreRange},
		{5, first - 1, ErrTimeRange},
		{5, last + 1, ErrTimeRange},
		{5, last, nil},
		{c.MaxScore(), first, nil},
	}
	for _, tt := range tests {
		_, err := c.Encode(tt.score, tt.reached)
		if !errors.Is(err, tt.want) {
			t.Errorf("Encode(%d, %d) = %v, want %v", tt.score, tt.reached, err, tt.want)
		}
	}
	// Adjacent scores and adjacent milliseconds stay distinct: the composite is exact.
	a, _ := c.Encode(c.MaxScore(), first)
	b, _ := c.Encode(c.MaxScore(), first+1)
	d, _ := c.Encode(c.MaxScore()-1, first)
	if !(a > b && b > d) {
		t.Fatalf("adjacent values collapsed: %v %v %v", a, b, d)
	}
}

func TestNewCompositeRejectsBadShapes(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct{ span, unit time.Duration }{
		{time.Hour, 0}, {time.Hour, time.Microsecond}, {time.Millisecond, time.Second},
	} {
		if _, err := NewComposite(now, tt.span, tt.unit); err == nil {
			t.Errorf("NewComposite(span %v, unit %v) accepted", tt.span, tt.unit)
		}
	}
}
