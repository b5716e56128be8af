package clickhouse

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/rankstream/rankstream/board"
)

// DailyStepsRow is a user's merged steps for one local day, a row of user_daily_steps,
// identified by (UserID, Day). Its version (DailyStepsVersion) orders a day's values as the
// boards do: more steps first, then reached earlier; a day's merged value only moves that
// way, so the largest wins whatever order writes land in.
type DailyStepsRow struct {
	UserID string
	// Day is the user's local calendar date: only its year, month and day (in its own
	// location) are stored.
	Day   time.Time
	Steps uint32
	// Region is the region the user is ranked in that day ("": none).
	Region string
	// UpdatedAt is when the value was reached (the event time of the report that set it, so
	// that a replay writes the same row), stored to the second.
	UpdatedAt time.Time
}

// DailyStepsVersion is the version of a day's row: steps × 2^32 plus the seconds from
// UpdatedAt to 2106 (the end of DateTime), so that more steps win, then the same steps
// reached earlier. Rows of equal version have equal steps and reach time (to the second);
// between them ClickHouse keeps the one inserted last.
func DailyStepsVersion(steps uint32, updatedAt time.Time) uint64 {
	return uint64(steps)<<32 | uint64(math.MaxUint32-uint32(updatedAt.Unix()))
}

// lastDate is the last day a Date column holds.
var lastDate = time.Date(2149, 6, 6, 0, 0, 0, 0, time.UTC)

// WriteDailySteps inserts rows into user_daily_steps in one batch; see WriteTopK.
func (s *Sink) WriteDailySteps(ctx context.Context, rows []DailyStepsRow) error {
	return write(ctx, s, &userDailySteps, rows, checkDailySteps, appendDailySteps)
}

// DailyStepsRowOf returns the row of a user's merged steps on local day d, reached at
// reachedMs (epoch ms: the row's UpdatedAt), ranked in region; an error wrapping ErrInvalidRow
// for a value the table cannot take (steps beyond UInt32, a date or time out of ClickHouse's
// range, no user).
func DailyStepsRowOf(user string, d board.Day, steps int64, region string, reachedMs int64) (DailyStepsRow, error) {
	if steps < 0 || steps > math.MaxUint32 {
		return DailyStepsRow{}, fmt.Errorf("%w: steps %d: want 0 to %d", ErrInvalidRow, steps, uint32(math.MaxUint32))
	}
	r := DailyStepsRow{UserID: user, Day: d.Date(), Steps: uint32(steps), Region: region,
		UpdatedAt: time.UnixMilli(reachedMs).UTC()}
	return r, r.Check()
}

// Check returns an error wrapping ErrInvalidRow if the row cannot be stored.
func (r *DailyStepsRow) Check() error { return checkDailySteps(r) }

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
	return b.Append(r.UserID, calendarDate(r.Day), r.Steps, r.Region, r.UpdatedAt, DailyStepsVersion(r.Steps, r.UpdatedAt))
}

// calendarDate returns t's date in t's location as midnight UTC, which a Date column stores
// as that date.
func calendarDate(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
