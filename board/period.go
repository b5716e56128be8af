package board

import (
	"fmt"
	"strconv"
	"time"
)

// Window is one period of a board: its kind, its id and the instants [Start, End) it
// covers. Ids: h "yyyymmddhh", d "yyyymmdd", w "yyyyWww" (ISO year and week), m "yyyymm",
// season its name, total "total" (whose Start and End are zero: it never ends).
type Window struct {
	Period     Period
	ID         string
	Start, End time.Time
}

// CalendarWindow returns the window of period p (h, d, w or m) that holds t in loc.
//
// A window starts when the local clock first shows its label (an hour of a date, a date, an
// ISO week or a month) and ends when the clock first shows a later label. So DST moves the
// bounds as the clocks move: a day can last 23 or 25 hours; the local hour that occurs twice
// when clocks go back is one window of two hours; the hour that never occurs when clocks go
// forward has no window (the hour before ends where the hour after begins), nor has a date a
// zone skipped (Pacific/Kiritimati skipped 1994-12-31). When clocks go back across a label's
// boundary (America/St_Johns went back from 00:01 to 23:01 of the day before, until 2011),
// the instants that show the earlier label again stay in the later window: windows never go
// back, so each id is one interval.
//
// The bounds come from the zone's transitions (time.Time.ZoneBounds), not from time.Date's
// normalisation, which the time package leaves unspecified around transitions.
// CalendarWindow panics for another period.
func CalendarWindow(p Period, t time.Time, loc *time.Location) Window {
	id, startWall, endWall := label(p, latestWall(t.In(loc)))
	return Window{Period: p, ID: id, Start: firstAtWall(startWall, loc), End: firstAtWall(endWall, loc)}
}

// Offsets stay within a day of UTC (UTC-12 to UTC+14 today, a little more in local mean
// times of the 19th century), so a wall clock differs from UTC by less than maxOffset.
const maxOffset = 26 * time.Hour

// maxSegments bounds the walk over a zone's transitions across 2*maxOffset.
const maxSegments = 64

// wall returns the local clock of t read as a UTC time.
func wall(t time.Time) time.Time {
	_, off := t.Zone()
	return t.UTC().Add(time.Duration(off) * time.Second)
}

// latestWall is the latest wall clock shown at or before t (t carries its location): the wall
// clock of t, or the one just before a transition that put the clocks back behind it.
func latestWall(t time.Time) time.Time {
	w := wall(t)
	cur := t
	for range maxSegments {
		segStart, _ := cur.ZoneBounds()
		if segStart.IsZero() || segStart.Before(t.Add(-maxOffset)) {
			return w
		}
		cur = segStart.Add(-time.Nanosecond)
		if pw := wall(cur); pw.After(w) {
			w = pw
		}
	}
	panic("BUG: board: more than " + fmt.Sprint(maxSegments) + " zone transitions in two days")
}

// firstAtWall returns the first instant whose wall clock in loc shows w (a UTC time read as
// a local clock) or later. Inside one zone segment the wall clock is the instant plus the
// segment's offset, so the candidate is w - offset, if the segment lasts until then.
func firstAtWall(w time.Time, loc *time.Location) time.Time {
	cur := w.Add(-maxOffset).In(loc) // its wall clock is before w in any zone
	for range maxSegments {
		_, segEnd := cur.ZoneBounds()
		_, off := cur.Zone()
		cand := w.Add(-time.Duration(off) * time.Second)
		if cand.Before(cur) {
			cand = cur
		}
		if segEnd.IsZero() || cand.Before(segEnd) {
			return cand.In(loc)
		}
		cur = segEnd
	}
	panic("BUG: board: more than " + fmt.Sprint(maxSegments) + " zone transitions in two days")
}

// label returns the label of period p that the wall clock w (a UTC time read as a local
// clock) shows, and the wall clocks at which that label starts and ends.
func label(p Period, w time.Time) (id string, start, end time.Time) {
	y, m, d := w.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	switch p {
	case PeriodHour:
		h := w.Hour()
		start = day.Add(time.Duration(h) * time.Hour)
		return fmt.Sprintf("%04d%02d%02d%02d", y, m, d, h), start, start.Add(time.Hour)
	case PeriodDay:
		return fmt.Sprintf("%04d%02d%02d", y, m, d), day, day.AddDate(0, 0, 1)
	case PeriodWeek:
		wy, wk := w.ISOWeek()
		monday := day.AddDate(0, 0, -int((w.Weekday()+6)%7))
		return fmt.Sprintf("%04dW%02d", wy, wk), monday, monday.AddDate(0, 0, 7)
	case PeriodMonth:
		first := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
		return fmt.Sprintf("%04d%02d", y, m), first, first.AddDate(0, 1, 0)
	}
	panic("BUG: board: no calendar window for period " + string(p))
}

// FirstLocalInstant is the first instant whose local date in loc is d or later: where a
// season starting on d starts (the next date's start, if loc skipped d).
func FirstLocalInstant(d Day, loc *time.Location) time.Time { return firstAtWall(d.Date(), loc) }

// Window returns the window of period p that holds t on board b; false if b does not keep
// p or, for seasons, if no season holds t.
func (b *Board) Window(p Period, t time.Time) (Window, bool) {
	if !b.Has(p) {
		return Window{}, false
	}
	switch p {
	case PeriodTotal:
		return Window{Period: PeriodTotal, ID: string(PeriodTotal)}, true
	case PeriodSeason:
		for _, s := range b.Seasons {
			if !t.Before(s.StartAt) && t.Before(s.EndAt) {
				return Window{Period: PeriodSeason, ID: s.Name, Start: s.StartAt, End: s.EndAt}, true
			}
		}
		return Window{}, false
	}
	return CalendarWindow(p, t, b.Zone), true
}

// Windows appends to dst the windows of every period of b that hold t, in the order of
// b.Periods (a season only if one holds t).
func (b *Board) Windows(dst []Window, t time.Time) []Window {
	for _, p := range b.Periods {
		if w, ok := b.Window(p, t); ok {
			dst = append(dst, w)
		}
	}
	return dst
}

// WindowByID returns the window of period p with the given id on board b (ids as in Window);
// false if b does not keep p, or id names no window of it: malformed, a season b does not
// declare, or an hour or a date the zone skipped.
func (b *Board) WindowByID(p Period, id string) (Window, bool) {
	if !b.Has(p) {
		return Window{}, false
	}
	switch p {
	case PeriodTotal:
		return Window{Period: PeriodTotal, ID: string(PeriodTotal)}, id == string(PeriodTotal)
	case PeriodSeason:
		for _, s := range b.Seasons {
			if s.Name == id {
				return Window{Period: PeriodSeason, ID: s.Name, Start: s.StartAt, End: s.EndAt}, true
			}
		}
		return Window{}, false
	}
	start, ok := labelStart(p, id)
	if !ok {
		return Window{}, false
	}
	w := CalendarWindow(p, firstAtWall(start, b.Zone), b.Zone)
	return w, w.ID == id
}

// labelStart returns the wall clock (a UTC time read as a local clock) at which the label id
// of a calendar period starts; false if id is malformed.
func labelStart(p Period, id string) (time.Time, bool) {
	layouts := map[Period]string{PeriodHour: "2006010215", PeriodDay: "20060102", PeriodMonth: "200601"}
	if p == PeriodWeek {
		if len(id) != 7 || id[4] != 'W' || !allDigits(id[:4]) || !allDigits(id[5:]) {
			return time.Time{}, false
		}
		y, _ := strconv.Atoi(id[:4])
		wk, _ := strconv.Atoi(id[5:])
		if wk < 1 || wk > 53 {
			return time.Time{}, false
		}
		jan4 := time.Date(y, 1, 4, 0, 0, 0, 0, time.UTC) // always in ISO week 1
		monday := jan4.AddDate(0, 0, -int((jan4.Weekday()+6)%7))
		return monday.AddDate(0, 0, 7*(wk-1)), true
	}
	layout, ok := layouts[p]
	if !ok || len(id) != len(layout) || !allDigits(id) {
		return time.Time{}, false
	}
	t, err := time.Parse(layout, id)
	return t, err == nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
