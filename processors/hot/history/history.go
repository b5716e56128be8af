// Package history takes the hot-search snapshots to the history store without letting it hold
// the serving path back: the merge appends each snapshot it publishes to the topic hot.history
// (Queue) before it writes Redis, and the consumer group hot-history (Run) writes them to the
// store in batches, retrying while the store is down, and commits only after the store took
// them. The backlog is the group's lag (rankstream_consumer_lag{group="hot-history"}), kept
// by Kafka, bounded by the topic's retention, never by memory.
//
// It imports topics, internal plumbing (kafka, obs, backoff) and franz-go; never a sink (the
// store is handed in by internal/service/app) or another processor family.
package history

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// Group is the history writer's consumer group (logical name): it reads the queue topic
// hot.history and commits after the store took each snapshot.
const Group = topics.HotHistoryGroup

// Store is the history store.
type Store interface {
	// Check returns an error (wrapping topics.ErrInvalidSnapshot) for a snapshot the store can
	// never take.
	Check(s *topics.TopKSnapshot) error
	// Write stores snapshots that passed Check, idempotently: writing one again changes nothing.
	Write(ctx context.Context, snaps []topics.TopKSnapshot) error
	// Retryable tells whether a failed Write may succeed later with the same snapshots.
	Retryable(err error) bool
}

// Queue appends snapshots to the topic hot.history.
type Queue struct {
	cl    *kafka.Client
	topic string
}

// NewQueue returns a queue writing through the process's Kafka client (the caller closes it).
func NewQueue(cl *kafka.Client) *Queue {
	return &Queue{cl: cl, topic: string(cl.Config().Names.Stream(topics.HotHistory))}
}

// Append stores s in the topic, keyed by its window end (Unix ms), and returns once the broker
// acknowledged it.
func (q *Queue) Append(ctx context.Context, s topics.TopKSnapshot) error {
	v, err := s.MarshalJSON()
	if err != nil {
		return fmt.Errorf("history queue: %w", err)
	}
	rec := &kgo.Record{Topic: q.topic, Key: []byte(strconv.FormatInt(s.WindowEnd.UnixMilli(), 10)), Value: v}
	if err := q.cl.ProduceSync(ctx, rec); err != nil {
		return fmt.Errorf("history queue: %w", err)
	}
	return nil
}

// maxBatch is the most snapshots one write takes (about 10 rows each with the default K).
const maxBatch = 500

// Run consumes hot.history as group hot-history until ctx ends (kafka.BatchConsumer): every
// poll's snapshots are checked (one the store can never take is logged, counted in
// rankstream_history_skipped_total and skipped), written in one batch, retried with backoff
// (50 ms to 5 s) while the failure is retryable, and committed only once written. A failure
// that is not retryable ends Run with an error (the supervisor restarts it).
func Run(ctx context.Context, kc kafka.Config, store Store, log *slog.Logger) error {
	topic := string(kc.Names.Stream(topics.HotHistory))
	return kafka.BatchConsumer{
		Group:    string(kc.Names.Group(Group)),
		Topic:    topic,
		Batch:    &batch{store: store},
		MaxBatch: maxBatch,
		Skipped:  obs.HistorySkipped.WithLabelValues(topic),
		Log:      log,
	}.Run(ctx, kc)
}

// batch is a batch of snapshots for the store.
type batch struct {
	store Store
	snaps []topics.TopKSnapshot
}

func (b *batch) Add(r *kgo.Record) error {
	var s topics.TopKSnapshot
	err := s.UnmarshalJSON(r.Value)
	if err == nil {
		err = b.store.Check(&s)
	}
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	b.snaps = append(b.snaps, s)
	return nil
}

func (b *batch) Len() int                        { return len(b.snaps) }
func (b *batch) Write(ctx context.Context) error { return b.store.Write(ctx, b.snaps) }
func (b *batch) Retryable(err error) bool        { return b.store.Retryable(err) }
func (b *batch) Reset()                          { b.snaps = b.snaps[:0] }
