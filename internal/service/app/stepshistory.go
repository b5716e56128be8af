package app

import (
	"context"

	"github.com/rankstream/rankstream/processors/steps"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
)

// StepsHistory is the ClickHouse store of the daily steps history (user_daily_steps): a
// steps.HistoryStore.
type StepsHistory struct{ Sink *rsclickhouse.Sink }

// Check returns an error for a day that cannot be a row (rsclickhouse.DailyStepsRowOf).
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

// dailyStepsRow hands a day to the sink's row rule (rsclickhouse.DailyStepsRowOf), which
// cannot take a processor's type.
func dailyStepsRow(d *steps.HistoryDay) (rsclickhouse.DailyStepsRow, error) {
	return rsclickhouse.DailyStepsRowOf(d.User, d.Day, d.Steps, d.Region, d.ReachedMs)
}
