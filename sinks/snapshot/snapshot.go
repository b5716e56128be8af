// Package snapshot publishes a merged hot-search snapshot to the stores that keep it: its rows
// in ClickHouse's topk_history (when a history sink is configured), then the latest snapshot in
// Redis. Both writes are idempotent, so a snapshot published again after a crash changes nothing.
package snapshot

import (
	"context"
	"fmt"

	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// Publisher stores snapshots. History may be nil (no ClickHouse).
type Publisher struct {
	Redis   *rsredis.HotWriter
	History *rsclickhouse.Sink
}

// Publish writes s to ClickHouse first and Redis last: Redis is what readers see, so a snapshot
// in Redis is always in the history too. In both, a snapshot missing partitions never replaces
// one of its window missing fewer (rsclickhouse.TopKVersion, rsredis.HotWriter).
func (p Publisher) Publish(ctx context.Context, s topics.TopKSnapshot) error {
	if p.History != nil {
		version, err := rsclickhouse.TopKVersion(len(s.MissingPartitions), s.GeneratedAt)
		if err != nil {
			return fmt.Errorf("snapshot: window ending %s: %w", topics.FormatSnapshotTime(s.WindowEnd), err)
		}
		rows := make([]rsclickhouse.TopKRow, len(s.Items))
		for i, it := range s.Items {
			rows[i] = rsclickhouse.TopKRow{Stream: s.Stream, WindowStart: s.WindowStart, WindowEnd: s.WindowEnd,
				Rank: uint32(i + 1), Item: it.Item, Count: it.Count, Error: it.Error, Version: version}
		}
		if len(rows) > 0 {
			if err := p.History.WriteTopK(ctx, rows); err != nil {
				return err
			}
		}
	}
	_, err := p.Redis.Write(ctx, s)
	return err
}
