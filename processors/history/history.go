// Package history takes the hot-search snapshots to the history store without letting it hold
// the serving path back: the merge appends each snapshot it publishes to the topic hot.history
// (Queue) before it writes Redis, and the consumer group hot-history (Run) writes them to the
// store in batches, retrying while the store is down, and commits only after the store took
// them. The backlog is the group's lag (rankstream_consumer_lag{group="hot-history"}), kept
// by Kafka, bounded by the topic's retention, never by memory.
//
// It imports topics, internal plumbing (kafka, obs, backoff) and franz-go; never a sink (the
// store is handed in by internal/app) or another processor family.
package history

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/backoff"
	"github.com/rankstream/rankstream/internal/kafka"
	"github.com/rankstream/rankstream/internal/obs"
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

// Run consumes hot.history as group hot-history until ctx ends: every poll's snapshots are
// checked (one the store can never take is logged, counted in
// rankstream_history_skipped_total and skipped), written in one batch, retried with backoff
// (50 ms to 5 s) while the failure is retryable, and committed only once written. A failure
// that is not retryable ends Run with an error (the supervisor restarts it).
func Run(ctx context.Context, kc kafka.Config, store Store, log *slog.Logger) error {
	group := string(kc.Names.Group(Group))
	topic := string(kc.Names.Stream(topics.HotHistory))
	log = log.With("group", group)
	// A client of its own: it is a member of the group.
	cl, err := kc.KgoClient(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	defer cl.Close()
	lagCtx, stopLag := context.WithCancel(ctx)
	defer stopLag()
	go kafka.ExportLag(lagCtx, group, memberLag(cl, group))
	kafka.Up(ctx)
	log.Info("history writer starting", "topic", topic)
	skipped := obs.HistorySkipped.WithLabelValues(topic)
	for {
		fetches := cl.PollRecords(ctx, maxBatch)
		if ctx.Err() != nil {
			log.Info("history writer stopped")
			return nil
		}
		failed := false
		fetches.EachError(func(t string, p int32, err error) {
			failed = true
			log.Warn("history: fetch failed (the client retries)", "topic", t, "partition", p, "err", err)
		})
		recs := fetches.Records()
		if len(recs) == 0 {
			if failed { // do not spin on a failing fetch
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			continue
		}
		snaps := make([]topics.TopKSnapshot, 0, len(recs))
		for _, r := range recs {
			var s topics.TopKSnapshot
			err := s.UnmarshalJSON(r.Value)
			if err == nil {
				err = store.Check(&s)
			}
			if err != nil {
				skipped.Inc()
				log.Error("history: snapshot the store cannot take skipped", "partition", r.Partition, "offset", r.Offset, "err", err)
				continue
			}
			snaps = append(snaps, s)
		}
		if err := write(ctx, store, snaps, log); err != nil || ctx.Err() != nil {
			if err == nil {
				log.Info("history writer stopped")
			}
			return err
		}
		if err := cl.CommitRecords(ctx, recs...); err != nil && ctx.Err() == nil {
			// Not fatal: the records are written; whoever owns them next writes them again.
			log.Warn("history: commit failed", "err", err)
		}
	}
}

// write writes snaps, retrying with backoff while the failure is retryable; it returns nil
// once written or when ctx ended.
func write(ctx context.Context, store Store, snaps []topics.TopKSnapshot, log *slog.Logger) error {
	if len(snaps) == 0 {
		return nil
	}
	failed := 0
	err := backoff.Retry(ctx, backoff.New(50*time.Millisecond, 5*time.Second), store.Retryable,
		func(attempt int, err error, _ time.Duration) {
			failed = attempt
			if attempt == 1 || attempt%20 == 0 {
				log.Warn("history: write failed, retrying (the snapshots stay uncommitted)", "attempt", attempt, "snapshots", len(snaps), "err", err)
			}
		},
		func() error { return store.Write(ctx, snaps) })
	switch {
	case err == nil:
		if failed > 0 {
			log.Info("history: store writable again", "attempts", failed+1, "snapshots", len(snaps))
		}
		return nil
	case ctx.Err() != nil:
		return nil
	}
	return fmt.Errorf("history: write %d snapshots: %w", len(snaps), err)
}

// memberLag is the group's lag on the partitions this member owns: the snapshots queued for
// the store and not written yet.
func memberLag(cl *kgo.Client, group string) func(context.Context) (int64, bool) {
	adm := kadm.NewClient(cl)
	return func(ctx context.Context) (int64, bool) {
		member, _ := cl.GroupMetadata()
		lags, err := adm.Lag(ctx, group)
		if err != nil || member == "" {
			return 0, false
		}
		var sum int64
		if l, ok := lags[group]; ok && l.Error() == nil {
			for _, ps := range l.Lag {
				for _, p := range ps {
					if p.Member != nil && p.Member.MemberID == member && p.Lag > 0 {
						sum += p.Lag
					}
				}
			}
		}
		return sum, true
	}
}
