package app

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/rankstream/rankstream/processors/steps"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
)

// StepsHistory is the ClickHouse store of the daily steps history (user_daily_steps): a
// steps.HistoryStore.
type StepsHistory struct{ Sink *rsclickhouse.Sink }

// Check returns an error for a day that cannot be a row (steps beyond UInt32, a date or
// time out of ClickHouse's range, no user).
func (StepsHistory) Check(d *steps.HistoryDay) error {
	_, err := dailyStepsRow(d)
	return err
}

// WriteDays inserts the days' rows in one batch (rsclickhouse.DailyStepsVersion: the largest
// value wins whatever the order).
func (h StepsHistory) WriteDays(ctx context.Context, days []steps.HistoryDay) error {
	rows := make([]rsclickhouse.DailyStepsRow, 0, len(days))
	for i := range days {
		r, err := dailyStepsRow(&days[i])
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}
	return h.Sink.WriteDailySteps(ctx, rows)
}

// Retryable tells whether a failed write may succeed later (rsclickhouse.IsRetryable).
func (StepsHistory) Retryable(err error) bool { return rsclickhouse.IsRetryable(err) }

func dailyStepsRow(d *steps.HistoryDay) (rsclickhouse.DailyStepsRow, error) {
	if d.Steps < 0 || d.Steps > math.MaxUint32 {
		return rsclickhouse.DailyStepsRow{}, fmt.Errorf("%w: steps %d: want 0 to %d", rsclickhouse.ErrInvalidRow, d.Steps, uint32(math.MaxUint32))
	}
	r := rsclickhouse.DailyStepsRow{UserID: d.User, Day: d.Day.Date(), Steps: uint32(d.Steps), Region: d.Region,
		UpdatedAt: time.UnixMilli(d.ReachedMs).UTC()}
	return r, r.Check()
}
