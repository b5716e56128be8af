package app

import (
	"context"
	"time"

	"github.com/rankstream/rankstream/internal/service/api"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	"github.com/rankstream/rankstream/topics"
)

// HotHistory answers the pages' time travel, GET /v1/history/hot (api.HotHistory), from
// topk_history.
type HotHistory struct{ Sink *rsclickhouse.Sink }

// HotSnapshotAt reads the snapshot of stream in effect at at; nil when none ended by then.
func (h HotHistory) HotSnapshotAt(ctx context.Context, stream string, at time.Time, k int) (*api.HotSnapshot, error) {
	rows, err := h.Sink.TopKAt(ctx, stream, at, k)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	s := &api.HotSnapshot{Stream: stream, At: at.UTC(), WindowStart: rows[0].WindowStart.UTC(), WindowEnd: rows[0].WindowEnd.UTC(),
		GeneratedAt: rows[0].GeneratedAt(), MissingPartitions: rows[0].MissingPartitions(), Items: make([]topics.TopKItem, len(rows))}
	for i, r := range rows {
		s.Items[i] = topics.TopKItem{Item: r.Item, Count: r.Count, Error: r.Error}
	}
	return s, nil
}
