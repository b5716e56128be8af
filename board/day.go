package board

import (
	"fmt"
	"strconv"
	"time"
)

// Day is a calendar date as the number yyyymmdd, e.g. 20261130. It has no zone: it is the
// local date of an instant in some zone.
type Day int32

// DayOf returns the calendar date of t in loc.
func DayOf(t time.Time, loc *time.Location) Day {
	y, m, d := t.In(loc).Date()
	return Day(y*10000 + int(m)*100 + d)
}

// ParseDay parses "yyyymmdd".
func ParseDay(s string) (Day, error) {
	t, err := time.Parse("20060102", s)
	if err != nil || len(s) != 8 {
		return 0, fmt.Errorf("board: day %q is not yyyymmdd", s)
	}
	return DayOf(t, time.UTC), nil
}

// String returns "yyyymmdd".
func (d Day) String() string { return strconv.Itoa(int(d)) }

// Date returns midnight UTC of the day's date.
func (d Day) Date() time.Time {
	return time.Date(int(d)/10000, time.Month(int(d)/100%100), int(d)%100, 0, 0, 0, 0, time.UTC)
}

// AddDays returns the date n days later (earlier for negative n).
func (d Day) AddDays(n int) Day { return DayOf(d.Date().AddDate(0, 0, n), time.UTC) }

// Zones span UTC-12 to UTC+14, so a local date D covers instants from D 00:00 at UTC+14 to
// D+1 00:00 at UTC-12: at most 50 hours.
const (
	earliestOffset = 14 * time.Hour
	daySpan        = 50 * time.Hour
)

// FirstInstant is the earliest instant whose local date can be d in any zone.
func (d Day) FirstInstant() time.Time { return d.Date().Add(-earliestOffset) }

// LastInstant is the end (exclusive) of the latest instant whose local date can be d.
func (d Day) LastInstant() time.Time { return d.FirstInstant().Add(daySpan) }

// DayComposite is the composite of a daily board: reach times anywhere in the day's 50-hour
// span at millisecond resolution (28 bits), which leaves 25 bits for the score: at most
// 33,554,431.
func DayComposite(d Day) Composite {
	c, err := NewComposite(d.FirstInstant(), daySpan, time.Millisecond)
	if err != nil {
		panic("BUG: day composite: " + err.Error())
	}
	return c
}
