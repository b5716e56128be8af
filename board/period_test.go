package board

import (
	"math/rand/v2"
	"testing"
	"time"
)

func utc(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

func TestCalendarWindow(t *testing.T) {
	tests := []struct {
		name       string
		zone       string
		p          Period
		at         string
		id         string
		start, end string
	}{
		// Shanghai: UTC+8 all year.
		{"Shanghai last hour of the day", "Asia/Shanghai", PeriodHour, "2026-11-30T15:59:59.999Z", "2026113023", "2026-11-30T15:00:00Z", "2026-11-30T16:00:00Z"},
		{"Shanghai midnight starts a day", "Asia/Shanghai", PeriodDay, "2026-11-30T16:00:00Z", "20261201", "2026-11-30T16:00:00Z", "2026-12-01T16:00:00Z"},
		{"Shanghai 2026-12-28 is in ISO week 53", "Asia/Shanghai", PeriodWeek, "2026-12-27T16:00:00Z", "2026W53", "2026-12-27T16:00:00Z", "2027-01-03T16:00:00Z"},
		{"Shanghai 2027-01-03 is still week 53 of 2026", "Asia/Shanghai", PeriodWeek, "2027-01-03T15:59:59Z", "2026W53", "2026-12-27T16:00:00Z", "2027-01-03T16:00:00Z"},
		{"Shanghai week 1 of 2027 starts 2027-01-04", "Asia/Shanghai", PeriodWeek, "2027-01-03T16:00:00Z", "2027W01", "2027-01-03T16:00:00Z", "2027-01-10T16:00:00Z"},
		{"Shanghai new year's month", "Asia/Shanghai", PeriodMonth, "2026-12-31T16:00:00Z", "202701", "2026-12-31T16:00:00Z", "2027-01-31T16:00:00Z"},
		{"Shanghai December", "Asia/Shanghai", PeriodMonth, "2026-12-31T15:59:59Z", "202612", "2026-11-30T16:00:00Z", "2026-12-31T16:00:00Z"},
		// New York springs forward 2026-03-08 02:00 EST -> 03:00 EDT (07:00Z).
		{"NY 23-hour day", "America/New_York", PeriodDay, "2026-03-08T12:00:00Z", "20260308", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"},
		{"NY hour before the gap", "America/New_York", PeriodHour, "2026-03-08T06:59:59Z", "2026030801", "2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z"},
		{"NY hour 02 never occurs: 03 follows 01", "America/New_York", PeriodHour, "2026-03-08T07:00:00Z", "2026030803", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"},
		{"NY March, 1 hour short", "America/New_York", PeriodMonth, "2026-03-15T00:00:00Z", "202603", "2026-03-01T05:00:00Z", "2026-04-01T04:00:00Z"},
		// New York falls back 2026-11-01 02:00 EDT -> 01:00 EST (06:00Z).
		{"NY 25-hour day", "America/New_York", PeriodDay, "2026-11-01T12:00:00Z", "20261101", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"},
		{"NY hour 00 before the repeat", "America/New_York", PeriodHour, "2026-11-01T04:59:59Z", "2026110100", "2026-11-01T04:00:00Z", "2026-11-01T05:00:00Z"},
		{"NY hour 01 the first time (EDT)", "America/New_York", PeriodHour, "2026-11-01T05:30:00Z", "2026110101", "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z"},
		{"NY hour 01 the second time (EST): the same 2-hour window", "America/New_York", PeriodHour, "2026-11-01T06:30:00Z", "2026110101", "2026-11-01T05:00:00Z", "2026-11-01T07:00:00Z"},
		{"NY hour 02 after the repeat", "America/New_York", PeriodHour, "2026-11-01T07:00:00Z", "2026110102", "2026-11-01T07:00:00Z", "2026-11-01T08:00:00Z"},
		{"NY week across the fall-back Sunday", "America/New_York", PeriodWeek, "2026-11-01T06:30:00Z", "2026W44", "2026-10-26T04:00:00Z", "2026-11-02T05:00:00Z"},
		{"NY November, 1 hour long", "America/New_York", PeriodMonth, "2026-11-01T04:00:00Z", "202611", "2026-11-01T04:00:00Z", "2026-12-01T05:00:00Z"},
		{"NY week 53 of 2026 at the new year", "America/New_York", PeriodWeek, "2027-01-01T05:00:00Z", "2026W53", "2026-12-28T05:00:00Z", "2027-01-04T05:00:00Z"},
		// Berlin springs forward 2026-03-29 02:00 CET -> 03:00 CEST (01:00Z) and falls back
		// 2026-10-25 03:00 CEST -> 02:00 CET (01:00Z).
		{"Berlin 23-hour day", "Europe/Berlin", PeriodDay, "2026-03-29T10:00:00Z", "20260329", "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"},
		{"Berlin hour before the gap", "Europe/Berlin", PeriodHour, "2026-03-29T00:59:59.999Z", "2026032901", "2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z"},
		{"Berlin hour 02 never occurs", "Europe/Berlin", PeriodHour, "2026-03-29T01:00:00Z", "2026032903", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"},
		{"Berlin 25-hour day", "Europe/Berlin", PeriodDay, "2026-10-25T22:30:00Z", "20261025", "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"},
		{"Berlin hour 02 twice (CEST)", "Europe/Berlin", PeriodHour, "2026-10-25T00:00:00Z", "2026102502", "2026-10-25T00:00:00Z", "2026-10-25T02:00:00Z"},
		{"Berlin hour 02 twice (CET)", "Europe/Berlin", PeriodHour, "2026-10-25T01:59:59Z", "2026102502", "2026-10-25T00:00:00Z", "2026-10-25T02:00:00Z"},
		{"Berlin new year in week 53", "Europe/Berlin", PeriodWeek, "2026-12-31T23:30:00Z", "2026W53", "2026-12-27T23:00:00Z", "2027-01-03T23:00:00Z"},
		{"Berlin week 1 of 2027", "Europe/Berlin", PeriodWeek, "2027-01-03T23:00:00Z", "2027W01", "2027-01-03T23:00:00Z", "2027-01-10T23:00:00Z"},
		{"Berlin month with the spring-forward", "Europe/Berlin", PeriodMonth, "2026-03-31T21:59:59Z", "202603", "2026-02-28T23:00:00Z", "2026-03-31T22:00:00Z"},
		// Kiritimati: UTC+14, the first zone to start a day; it moved from UTC-10 by
		// skipping 1994-12-31.
		{"Kiritimati day", "Pacific/Kiritimati", PeriodDay, "2026-11-30T10:00:00Z", "20261201", "2026-11-30T10:00:00Z", "2026-12-01T10:00:00Z"},
		{"Kiritimati week 1 of 2027", "Pacific/Kiritimati", PeriodWeek, "2027-01-03T10:00:00Z", "2027W01", "2027-01-03T10:00:00Z", "2027-01-10T10:00:00Z"},
		{"Kiritimati 2026-12-28 in week 53", "Pacific/Kiritimati", PeriodWeek, "2027-01-03T09:59:59Z", "2026W53", "2026-12-27T10:00:00Z", "2027-01-03T10:00:00Z"},
		{"Kiritimati the day before the skipped one", "Pacific/Kiritimati", PeriodDay, "1994-12-31T09:59:59Z", "19941230", "1994-12-30T10:00:00Z", "1994-12-31T10:00:00Z"},
		{"Kiritimati 1994-12-31 never occurs", "Pacific/Kiritimati", PeriodDay, "1994-12-31T10:00:00Z", "19950101", "1994-12-31T10:00:00Z", "1995-01-01T10:00:00Z"},
		{"Kiritimati's week of the skipped day has 6 days", "Pacific/Kiritimati", PeriodWeek, "1994-12-31T12:00:00Z", "1994W52", "1994-12-26T10:00:00Z", "1995-01-01T10:00:00Z"},
		{"Kiritimati's December 1994 has 30 days", "Pacific/Kiritimati", PeriodMonth, "1994-12-31T09:00:00Z", "199412", "1994-12-01T10:00:00Z", "1994-12-31T10:00:00Z"},
		// St. John's went back from 00:01 NDT to 23:01 NST of the day before (until 2011):
		// the repeated minutes of 2005-10-29 stay in the day that had begun.
		{"St Johns day before the repeat", "America/St_Johns", PeriodDay, "2005-10-30T02:29:59Z", "20051029", "2005-10-29T02:30:00Z", "2005-10-30T02:30:00Z"},
		{"St Johns 23:01 shown again belongs to the new day", "America/St_Johns", PeriodDay, "2005-10-30T02:31:00Z", "20051030", "2005-10-30T02:30:00Z", "2005-10-31T03:30:00Z"},
		// Half-hour offsets: hours start at :30 UTC.
		{"Kolkata hour", "Asia/Kolkata", PeriodHour, "2026-11-30T00:00:00Z", "2026113005", "2026-11-29T23:30:00Z", "2026-11-30T00:30:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := CalendarWindow(tt.p, utc(t, tt.at), mustZone(t, tt.zone))
			if w.Period != tt.p || w.ID != tt.id || !w.Start.Equal(utc(t, tt.start)) || !w.End.Equal(utc(t, tt.end)) {
				t.Fatalf("CalendarWindow(%s, %s, %s) = %s [%s, %s), want %s [%s, %s)", tt.p, tt.at, tt.zone,
					w.ID, w.Start.UTC().Format(time.RFC3339), w.End.UTC().Format(time.RFC3339), tt.id, tt.start, tt.end)
			}
		})
	}
}

// TestCalendarWindowsTileTime: in zones with every kind of transition, for random instants
// and walks across consecutive windows: a window holds its instant, starts where the local
// clock first shows its label, is the window of each of its instants, and the next window
// (a later id) starts where it ends.
func TestCalendarWindowsTileTime(t *testing.T) {
	zones := []string{"UTC", "Asia/Shanghai", "America/New_York", "Europe/Berlin", "Pacific/Kiritimati",
		"Australia/Lord_Howe", "America/Santiago", "Asia/Beirut", "Asia/Kolkata", "Pacific/Apia", "America/St_Johns"}
	rng := rand.New(rand.NewPCG(11, 11))
	from := utc(t, "1993-01-01T00:00:00Z").UnixMilli()
	to := utc(t, "2031-01-01T00:00:00Z").UnixMilli()
	for _, zone := range zones {
		loc := mustZone(t, zone)
		for _, p := range []Period{PeriodHour, PeriodDay, PeriodWeek, PeriodMonth} {
			for range 200 {
				at := time.UnixMilli(from + rng.Int64N(to-from))
				w := CalendarWindow(p, at, loc)
				for range 5 {
					if at.Before(w.Start) || !at.Before(w.End) {
						t.Fatalf("%s %s: %s outside its window %+v", zone, p, at, w)
					}
					if id, _, _ := label(p, wall(w.Start)); id != w.ID {
						t.Fatalf("%s %s: window %s starts at %s, which shows %s", zone, p, w.ID, w.Start, id)
					}
					inside := w.Start.Add(time.Duration(rng.Int64N(int64(w.End.Sub(w.Start)))))
					for _, in := range []time.Time{w.Start, w.End.Add(-time.Nanosecond), inside} {
						if got := CalendarWindow(p, in, loc); !sameWindow(got, w) {
							t.Fatalf("%s %s: %s in window %+v has window %+v", zone, p, in, w, got)
						}
					}
					if prev := CalendarWindow(p, w.Start.Add(-time.Nanosecond), loc); prev.ID >= w.ID || !prev.End.Equal(w.Start) {
						t.Fatalf("%s %s: window %+v follows %+v", zone, p, w, prev)
					}
					next := CalendarWindow(p, w.End, loc)
					if !next.Start.Equal(w.End) || next.ID <= w.ID {
						t.Fatalf("%s %s: window %+v is followed by %+v", zone, p, w, next)
					}
					at, w = w.End, next
				}
			}
		}
	}
}

func sameWindow(a, b Window) bool {
	return a.Period == b.Period && a.ID == b.ID && a.Start.Equal(b.Start) && a.End.Equal(b.End)
}

func TestFirstLocalInstant(t *testing.T) {
	for _, tt := range []struct {
		day  Day
		zone string
		want string
	}{
		{20260901, "Asia/Shanghai", "2026-08-31T16:00:00Z"},
		{20261101, "America/New_York", "2026-11-01T04:00:00Z"},
		{20260308, "America/New_York", "2026-03-08T05:00:00Z"},
		{20261201, "Pacific/Kiritimati", "2026-11-30T10:00:00Z"},
		{19941231, "Pacific/Kiritimati", "1994-12-31T10:00:00Z"}, // skipped: the next date's start
		{20270101, "Pacific/Pago_Pago", "2027-01-01T11:00:00Z"},
	} {
		if got := FirstLocalInstant(tt.day, mustZone(t, tt.zone)); !got.Equal(utc(t, tt.want)) {
			t.Errorf("FirstLocalInstant(%v, %s) = %s, want %s", tt.day, tt.zone, got.UTC().Format(time.RFC3339), tt.want)
		}
	}
}

func TestBoardWindows(t *testing.T) {
	b, err := NewBoard(Spec{Name: "arena", Periods: []string{"total", "season", "d", "w"}, TZ: "America/New_York",
		Seasons: []SeasonSpec{{"s2", "2026-12-01", "2027-03-01"}, {"s1", "2026-09-01", "2026-11-01"}}})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(at string) []string {
		var out []string
		for _, w := range b.Windows(nil, utc(t, at)) {
			out = append(out, string(w.Period)+":"+w.ID)
		}
		return out
	}
	for _, tt := range []struct {
		at   string
		want []string
	}{
		{"2026-09-01T03:59:59Z", []string{"d:20260831", "w:2026W36", "total:total"}},
		{"2026-09-01T04:00:00Z", []string{"d:20260901", "w:2026W36", "season:s1", "total:total"}},
		{"2026-11-01T03:59:59Z", []string{"d:20261031", "w:2026W44", "season:s1", "total:total"}},
		{"2026-11-01T04:00:00Z", []string{"d:20261101", "w:2026W44", "total:total"}}, // between seasons
		{"2026-12-01T05:00:00Z", []string{"d:20261201", "w:2026W49", "season:s2", "total:total"}},
	} {
		if got := ids(tt.at); !equal(got, tt.want) {
			t.Errorf("windows at %s: %q, want %q", tt.at, got, tt.want)
		}
	}
	if _, ok := b.Window(PeriodHour, utc(t, "2026-09-01T04:00:00Z")); ok {
		t.Error("a window of a period the board does not keep")
	}
	w, _ := b.Window(PeriodSeason, utc(t, "2026-10-01T00:00:00Z"))
	if !w.Start.Equal(utc(t, "2026-09-01T04:00:00Z")) || !w.End.Equal(utc(t, "2026-11-01T04:00:00Z")) {
		t.Errorf("season s1: %+v", w)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestWindowByIDRoundTrips: every window of every period, at instants over two years in zones
// with and without DST (and one that skipped a date), is found again by its id with the same
// bounds; malformed ids, skipped dates and undeclared seasons are not.
func TestWindowByIDRoundTrips(t *testing.T) {
	for _, zone := range []string{"UTC", "America/New_York", "Asia/Shanghai", "Pacific/Kiritimati", "America/St_Johns", "Australia/Lord_Howe"} {
		b, err := NewBoard(Spec{Name: "b", Periods: []string{"h", "d", "w", "m", "season", "total"}, TZ: zone,
			Seasons: []SeasonSpec{{"s1", "2026-09-01", "2026-12-01"}}})
		if err != nil {
			t.Fatal(err)
		}
		for at := utc(t, "1994-12-01T00:00:00Z"); at.Before(utc(t, "1995-01-15T00:00:00Z")) || at.Year() >= 2025 && at.Before(utc(t, "2027-01-15T00:00:00Z")); {
			for _, w := range b.Windows(nil, at) {
				got, ok := b.WindowByID(w.Period, w.ID)
				if !ok || got.ID != w.ID || !got.Start.Equal(w.Start) || !got.End.Equal(w.End) {
					t.Fatalf("%s: %s:%s at %s found as %+v (%v), want %+v", zone, w.Period, w.ID, at, got, ok, w)
				}
			}
			if at = at.Add(37 * time.Minute); at.After(utc(t, "1995-01-15T00:00:00Z")) && at.Year() < 2025 {
				at = utc(t, "2025-12-01T00:00:00Z")
			}
		}
	}
	b, err := NewBoard(Spec{Name: "b", Periods: []string{"h", "d", "w", "m", "total"}, TZ: "Pacific/Kiritimati"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		p  Period
		id string
	}{
		{PeriodDay, "19941231"}, // Kiritimati skipped it
		{PeriodDay, "20261131"}, {PeriodDay, "2026113"}, {PeriodDay, "+2026113"}, {PeriodDay, "2026-11-30"},
		{PeriodHour, "2026113024"}, {PeriodMonth, "202613"}, {PeriodMonth, "202600"},
		{PeriodWeek, "2026W54"}, {PeriodWeek, "2026W00"}, {PeriodWeek, "2025W53"}, {PeriodWeek, "2026w01"}, {PeriodWeek, "2026W1"},
		{PeriodTotal, "all"}, {PeriodSeason, "s1"},
	} {
		if w, ok := b.WindowByID(tc.p, tc.id); ok {
			t.Errorf("%s:%s found: %+v", tc.p, tc.id, w)
		}
	}
	if w, ok := b.WindowByID(PeriodWeek, "2026W53"); !ok || w.Start.In(b.Zone).Format(time.DateOnly) != "2026-12-28" {
		t.Errorf("2026W53: %+v %v", w, ok)
	}
}
