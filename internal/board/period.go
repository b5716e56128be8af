package board

import (
	"fmt"
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
// A window is the longest run of instants around t whose local clock shows the same label
// (the same hour of the same date, date, ISO week or month). So DST moves the bounds as the
// clocks move: a day can last 23 or 25 hours, the local hour that occurs twice when clocks go
// back is one window of two hours, and the hour that never occurs when clocks go forward has
// no window (the hour before ends where the hour after begins). A date a zone skipped
// (Pacific/Kiritimati skipped 1994-12-31) has no window either.
//
// Limit: a zone whose clocks go back across a label's boundary (from 02:30 to 01:30, say)
// shows a label twice with another label in between; both runs then share one id. No zone
// of current tzdata does that for h, d, w or m: clocks go back at or to whole hours.
//
// The bounds come from the zone's transitions (time.Time.ZoneBounds), not from
// time.Date's normalisation, which the time package leaves unspecified around
// transitions. CalendarWindow panics for another period.
func CalendarWindow(p Period, t time.Time, loc *time.Location) Window {
	id, startWall, endWall := label(p, t.In(loc))
	return Window{Period: p, ID: id, Start: runStart(p, t, loc, id, startWall), End: runEnd(p, t, loc, id, endWall)}
}

// label returns the label of period p that lt (a local time) shows, and the wall-clock
// seconds (local time read as UTC) at which that label starts and ends.
func label(p Period, lt time.Time) (id string, startWall, endWall int64) {
	y, m, d := lt.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix()
	switch p {
	case PeriodHour:
		h := int64(lt.Hour())
		return fmt.Sprintf("%04d%02d%02d%02d", y, m, d, h), day + h*3600, day + h*3600 + 3600
	case PeriodDay:
		return fmt.Sprintf("%04d%02d%02d", y, m, d), day, day + 86400
	case PeriodWeek:
		wy, w := lt.ISOWeek()
		monday := day - int64((lt.Weekday()+6)%7)*86400
		return fmt.Sprintf("%04dW%02d", wy, w), monday, monday + 7*86400
	case PeriodMonth:
		return fmt.Sprintf("%04d%02d", y, m), time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(y, m+1, 1, 0, 0, 0, 0, time.UTC).Unix()
	}
	panic("BUG: board: no calendar window for period " + string(p))
}

// maxSegments bounds the walk over a zone's transitions inside one window (a month crosses
// at most a few).
const maxSegments = 64

// runStart is the first instant of the run of label id that holds t. Inside one zone
// segment (a constant offset) the wall clock is the instant plus the offset, so the label
// starts at startWall - offset, unless that is before the segment: then the run goes on in
// the previous segment if the instant just before still shows the label.
func runStart(p Period, t time.Time, loc *time.Location, id string, startWall int64) time.Time {
	cur := t.In(loc)
	for range maxSegments {
		segStart, _ := cur.ZoneBounds()
		_, off := cur.Zone()
		cand := time.Unix(startWall-int64(off), 0)
		if segStart.IsZero() || cand.After(segStart) {
			return cand
		}
		prev := segStart.Add(-time.Nanosecond)
		if l, _, _ := label(p, prev); l != id {
			return segStart
		}
		cur = prev
	}
	panic("BUG: board: window start beyond " + fmt.Sprint(maxSegments) + " zone transitions")
}

// runEnd is the instant after the run of label id that holds t (see runStart).
func runEnd(p Period, t time.Time, loc *time.Location, id string, endWall int64) time.Time {
	cur := t.In(loc)
	for range maxSegments {
		_, segEnd := cur.ZoneBounds()
		_, off := cur.Zone()
		cand := time.Unix(endWall-int64(off), 0)
		if segEnd.IsZero() || cand.Before(segEnd) {
			return cand
		}
		if l, _, _ := label(p, segEnd); l != id {
			return segEnd
		}
		cur = segEnd
	}
	panic("BUG: board: window end beyond " + fmt.Sprint(maxSegments) + " zone transitions")
}

// FirstLocalInstant is the first instant whose local date in loc is d or later: where a
// season starting on d starts (the next date's start, if loc skipped d).
func FirstLocalInstant(d Day, loc *time.Location) time.Time {
	// No zone is ahead of UTC+14, so the local date of this instant is d or earlier.
	t := d.FirstInstant()
	for range 8 {
		w := CalendarWindow(PeriodDay, t, loc)
		if w.ID >= d.String() {
			return w.Start
		}
		t = w.End
	}
	panic("BUG: board: date " + d.String() + " not reached")
}

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
