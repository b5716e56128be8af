// This file publishes a merged hot-search snapshot to the stores that keep it: the
// latest snapshot in Redis (the serving path) and, through a durable queue, its rows in
// ClickHouse's topk_history (history). Both writes are idempotent, so a snapshot published
// again after a crash changes nothing.

package app

import (
	"context"
	"fmt"

	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// Queue keeps snapshots durably for the history store (the topic hot.history, written by
// processors/hot/history.Queue); Append returns once the snapshot is stored.
type Queue interface {
	Append(ctx context.Context, s topics.TopKSnapshot) error
}

// Publisher stores snapshots. History may be nil (no history).
type Publisher struct {
	Redis   *rsredis.HotWriter
	History Queue
}

// Publish checks s once, before anything is written: a snapshot that Redis or the history
// store could never take fails with topics.ErrInvalidSnapshot (retrying cannot help). Then it
// queues s for the history store and writes it to Redis last: Redis is what readers see, so a
// snapshot in Redis is always on its way to the history too, and a history store that is down
// never holds the snapshots in Redis back. In both stores a snapshot missing partitions never
// replaces one of its window missing fewer (topics.TopKSnapshot.Supersedes and Completeness:
// rsredis.HotWriter applies the first, rsclickhouse.TopKVersion packs the second).
func (p Publisher) Publish(ctx context.Context, s topics.TopKSnapshot) error {
	if err := p.check(&s); err != nil {
		return fmt.Errorf("snapshot: window ending %s: %w", topics.FormatSnapshotTime(s.WindowEnd), err)
	}
	if p.History != nil {
		if err := p.History.Append(ctx, s); err != nil {
			return fmt.Errorf("snapshot: window ending %s: queue for history: %w", topics.FormatSnapshotTime(s.WindowEnd), err)
		}
	}
	_, err := p.Redis.Write(ctx, s)
	return err
}

func (p Publisher) check(s *topics.TopKSnapshot) error {
	if s.Stream == "" {
		s.Stream = topics.SearchStream
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("%w: %w", topics.ErrInvalidSnapshot, err)
	}
	if p.History != nil {
		return History{}.Check(s)
	}
	return nil
}

// History writes snapshots to ClickHouse's topk_history (processors/hot/history.Store).
type History struct{ Sink *rsclickhouse.Sink }

// Check returns an error wrapping topics.ErrInvalidSnapshot if s cannot be stored as rows.
func (History) Check(s *topics.TopKSnapshot) error {
	_, err := rows(s)
	return err
}

// Write inserts the rows of every snapshot in one batch. Rows written again replace
// themselves (ReplacingMergeTree keyed by stream, window end and rank).
func (h History) Write(ctx context.Context, snaps []topics.TopKSnapshot) error {
	var all []rsclickhouse.TopKRow
	for i := range snaps {
		r, err := rows(&snaps[i])
		if err != nil {
			return err
		}
		all = append(all, r...)
	}
	return h.Sink.WriteTopK(ctx, all)
}

// Retryable tells whether a failed Write may succeed later (rsclickhouse.IsRetryable).
func (History) Retryable(err error) bool { return rsclickhouse.IsRetryable(err) }

// rows are the topk_history rows of s, all with the snapshot's version: its Completeness, then
// its generation time (rsclickhouse.TopKVersion).
func rows(s *topics.TopKSnapshot) ([]rsclickhouse.TopKRow, error) {
	version, err := rsclickhouse.TopKVersion(s.Completeness(), s.GeneratedAt)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", topics.ErrInvalidSnapshot, err)
	}
	stream := s.Stream
	if stream == "" {
		stream = topics.SearchStream
	}
	out := make([]rsclickhouse.TopKRow, len(s.Items))
	for i, it := range s.Items {
		out[i] = rsclickhouse.TopKRow{Stream: stream, WindowStart: s.WindowStart, WindowEnd: s.WindowEnd,
			Rank: uint32(i + 1), Item: it.Item, Count: it.Count, Error: it.Error, Version: version}
		if err := out[i].Check(); err != nil {
			return nil, fmt.Errorf("%w: %w", topics.ErrInvalidSnapshot, err)
		}
	}
	return out, nil
}
