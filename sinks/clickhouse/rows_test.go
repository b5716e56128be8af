package clickhouse

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
)

// TestDailyStepsRowOf: a day becomes its row, and what the table cannot take is refused as
// an invalid row.
func TestDailyStepsRowOf(t *testing.T) {
	reached := time.Date(2026, 11, 30, 7, 15, 0, 0, time.UTC)
	r, err := DailyStepsRowOf("u1", board.Day(20261130), 12_000, "eu", reached.UnixMilli())
	if err != nil || r.UserID != "u1" || !r.Day.Equal(board.Day(20261130).Date()) || r.Steps != 12_000 || r.Region != "eu" || !r.UpdatedAt.Equal(reached) {
		t.Errorf("row %+v %v", r, err)
	}
	for _, c := range []struct {
		user  string
		steps int64
	}{{"u1", -1}, {"u1", math.MaxUint32 + 1}, {"", 1}} {
		if _, err := DailyStepsRowOf(c.user, board.Day(20261130), c.steps, "", reached.UnixMilli()); !errors.Is(err, ErrInvalidRow) {
			t.Errorf("user %q, %d steps: %v, want an invalid row", c.user, c.steps, err)
		}
	}
}

func TestArchivePeriod(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{ArchivePeriod(board.PeriodDay, "20261130", ""), "d:20261130"},
		{ArchivePeriod(board.PeriodSeason, "s3", "eu"), "season:s3:s:eu"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
