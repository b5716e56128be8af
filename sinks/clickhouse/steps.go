package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// DailyStepsRow is a user's merged steps for one local day, a row of user_daily_steps,
// identified by (UserID, Day). Its version is Steps: a day's merged value only grows, so the
// largest wins whatever order writes land in.
type DailyStepsRow struct {
	UserID string
	// Day is the user's local calendar date: only its year, month and day (in its own
	// location) are stored.
	Day   time.Time
	Steps uint32
	// UpdatedAt is when the value was reached (the event time of the report that set it, so
	// that a replay writes the same row), stored to the second.
	UpdatedAt time.Time
}

// lastDate is the last day a Date column holds.
var lastDate = time.Date(2149, 6, 6, 0, 0, 0, 0, time.UTC)

// WriteDailySteps inserts rows into user_daily_steps in one batch; see WriteTopK.
func (s *Sink) WriteDailySteps(ctx context.Context, rows []DailyStepsRow) error {
	return write(ctx, s, &userDailySteps, rows, checkDailySteps, appendDailySteps)
}

func checkDailySteps(r *DailyStepsRow) error {
	if r.UserID == "" {
		return fmt.Errorf("%w: empty user id", ErrInvalidRow)
	}
	if d := calendarDate(r.Day); d.Year() < 1970 || d.After(lastDate) {
		return fmt.Errorf("%w: day %s: want a date from 1970 to 2149", ErrInvalidRow, d.Format(time.DateOnly))
	}
	return checkDateTime("updated_at", r.UpdatedAt)
}

func appendDailySteps(b driver.Batch, r *DailyStepsRow) error {
	return b.Append(r.UserID, calendarDate(r.Day), r.Steps, r.UpdatedAt, uint64(r.Steps))
}

// calendarDate returns t's date in t's location as midnight UTC, which a Date column stores
// as that date.
func calendarDate(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
