package clickhouse

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/rankstream/rankstream/internal/platform/obs"
)

// write checks every row, then inserts them all into t through one native batch. appendRow
// appends one row's values in the order of t's columns.
func write[R any](ctx context.Context, s *Sink, t *table, rows []R, check func(*R) error, appendRow func(driver.Batch, *R) error) error {
	if len(rows) == 0 {
		return nil
	}
	for i := range rows {
		if err := check(&rows[i]); err != nil {
			return fmt.Errorf("clickhouse sink: %s: row %d: %w", t.name, i, err)
		}
	}
	start := time.Now()
	if err := send(ctx, s, t, rows, appendRow); err != nil {
		obs.SinkWriteErrors.WithLabelValues(t.sink).Inc()
		return fmt.Errorf("clickhouse sink: %s: insert %d rows: %w", t.name, len(rows), err)
	}
	obs.SinkWriteSeconds.WithLabelValues(t.sink).Observe(time.Since(start).Seconds())
	obs.SinkRowsWritten.WithLabelValues(t.sink).Add(float64(len(rows)))
	return nil
}

func send[R any](ctx context.Context, s *Sink, t *table, rows []R, appendRow func(driver.Batch, *R) error) error {
	batch, err := s.conn.PrepareBatch(ctx, t.insertSQL(s.database))
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	for i := range rows {
		if err := appendRow(batch, &rows[i]); err != nil {
			_ = batch.Abort() // the append error is the one to report
			return fmt.Errorf("append row %d: %w", i, err)
		}
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// checkDateTime checks that t fits a DateTime column (1970 to 2106; the column keeps whole
// seconds).
func checkDateTime(name string, t time.Time) error {
	if sec := t.Unix(); sec < 0 || sec > math.MaxUint32 {
		return fmt.Errorf("%w: %s %s: want a time from 1970 to 2106", ErrInvalidRow, name, t.Format(time.RFC3339))
	}
	return nil
}
