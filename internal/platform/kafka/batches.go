package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/backoff"
)

// Batch is a batch for a store under construction: BatchConsumer adds records to it, writes it
// and resets it.
type Batch interface {
	// Add takes one record into the batch. An error means the store can never take the
	// record: it is logged, counted and skipped (never retried).
	Add(r *kgo.Record) error
	// Len is the size of the batch, in the unit MaxBatch counts.
	Len() int
	// Write stores the batch idempotently: writing it again changes nothing. After a failure
	// it is called again with the same batch while Retryable says so.
	Write(ctx context.Context) error
	// Retryable tells whether a failed Write may succeed later with the same batch.
	Retryable(err error) bool
	// Reset empties the batch once written.
	Reset()
}

// BatchConsumer reads one topic as a consumer group into a store: it polls, adds every record
// to Batch, writes the batch (retrying with backoff from 50 ms to 5 s while the failure is
// retryable) and commits the records only once the store took them. The backlog is the
// group's lag (rankstream_consumer_lag{group,topic,partition}), kept by Kafka, never by memory. A failure
// that is not retryable ends Run with an error (the supervisor restarts it).
type BatchConsumer struct {
	Group string // the consumer group (full name)
	Topic string // the topic it reads (full name)
	Batch Batch
	// MaxBatch is the largest batch: a batch this size is written at once, and a poll takes
	// at most as many records as the batch has room for (each record adds at least one).
	MaxBatch int
	// Interval is how long a batch gathers records before it is written; 0 writes every
	// poll's records at once.
	Interval time.Duration
	// Skipped counts the records the store can never take.
	Skipped prometheus.Counter
	// Reassigned, when not nil, is called when this member loses partitions (a rebalance, or
	// the group's session lost): a batch that remembers what it wrote must forget it, since
	// another member may have written those partitions meanwhile. It runs on the client's
	// goroutine, concurrently with Add.
	Reassigned func()
	Log        *slog.Logger
}

// Run consumes until ctx ends or a write fails for good. When ctx ends, the batch gathered so
// far is written and committed within drainTimeout (drain); what the store did not take by
// then stays uncommitted: whoever owns those partitions next reads it again.
func (c BatchConsumer) Run(ctx context.Context, kc Config) error {
	log := c.Log.With("group", c.Group)
	// A client of its own: it is a member of the group.
	opts := []kgo.Opt{kgo.ConsumerGroup(c.Group), kgo.ConsumeTopics(c.Topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if c.Reassigned != nil {
		forget := func(context.Context, *kgo.Client, map[string][]int32) { c.Reassigned() }
		opts = append(opts, kgo.OnPartitionsRevoked(forget), kgo.OnPartitionsLost(forget))
	}
	cl, err := kc.KgoClient(opts...)
	if err != nil {
		return fmt.Errorf("%s: %w", c.Group, err)
	}
	defer cl.Close()
	lagCtx, stopLag := context.WithCancel(ctx)
	defer stopLag()
	go ExportLag(lagCtx, c.Group, memberLag(cl, c.Group))
	Up(ctx)
	log.Info("batch consumer starting", "topic", c.Topic)
	var (
		last  = map[int32]*kgo.Record{} // the newest record of each partition in the batch
		since time.Time                 // when the batch got its first record
	)
	for {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if c.Interval > 0 && len(last) > 0 {
			pollCtx, cancel = context.WithDeadline(ctx, since.Add(c.Interval))
		}
		fetches := cl.PollRecords(pollCtx, max(c.MaxBatch-c.Batch.Len(), 1))
		cancel()
		if ctx.Err() != nil {
			c.drain(ctx, cl, last, log)
			return nil
		}
		failed := false
		fetches.EachError(func(t string, p int32, err error) {
			if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
				return // the batch's interval ended
			}
			failed = true
			log.Warn("fetch failed (the client retries)", "topic", t, "partition", p, "err", err)
		})
		recs := fetches.Records()
		if len(recs) > 0 && len(last) == 0 {
			since = time.Now()
		}
		for _, r := range recs {
			last[r.Partition] = r
			if err := c.Batch.Add(r); err != nil {
				c.Skipped.Inc()
				log.Error("record the store can never take skipped", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
			}
		}
		if len(recs) == 0 && failed { // do not spin on a failing fetch
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
		if len(last) == 0 || (c.Interval > 0 && time.Since(since) < c.Interval && c.Batch.Len() < c.MaxBatch) {
			continue
		}
		if err := c.flush(ctx, cl, last, log); err != nil || ctx.Err() != nil {
			if err == nil {
				c.drain(ctx, cl, last, log)
			}
			return err
		}
	}
}

// drainTimeout bounds how long a stopping consumer spends writing and committing its last
// batch.
const drainTimeout = 5 * time.Second

// drain writes and commits, once ctx (the consumer's) ended, what the batch holds, within
// drainTimeout: a stop then leaves nothing for the next owner to write again. If the store
// does not take it in time, the records stay uncommitted and the next owner writes them.
func (c BatchConsumer) drain(ctx context.Context, cl *kgo.Client, last map[int32]*kgo.Record, log *slog.Logger) {
	if len(last) > 0 {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
		defer cancel()
		if err := c.flush(dctx, cl, last, log); err != nil || dctx.Err() != nil {
			log.Warn("batch consumer stopped with records not written: the next owner writes them", "err", err)
			return
		}
	}
	log.Info("batch consumer stopped")
}

// flush writes the batch (write) and commits the newest record of each partition in it
// (last); it resets both once the store took them.
func (c BatchConsumer) flush(ctx context.Context, cl *kgo.Client, last map[int32]*kgo.Record, log *slog.Logger) error {
	if err := c.write(ctx, log); err != nil || ctx.Err() != nil {
		return err
	}
	done := make([]*kgo.Record, 0, len(last))
	for _, r := range last {
		done = append(done, r)
	}
	if err := cl.CommitRecords(ctx, done...); err != nil && ctx.Err() == nil {
		// Not fatal: the records are written; whoever owns them next writes them again.
		log.Warn("commit failed", "err", err)
	}
	c.Batch.Reset()
	clear(last)
	return nil
}

// write writes the batch, retrying with backoff while the failure is retryable; it returns nil
// once written or when ctx ended.
func (c BatchConsumer) write(ctx context.Context, log *slog.Logger) error {
	n := c.Batch.Len()
	if n == 0 {
		return nil
	}
	failed := 0
	err := backoff.Retry(ctx, backoff.New(50*time.Millisecond, 5*time.Second), c.Batch.Retryable,
		func(attempt int, err error, _ time.Duration) {
			failed = attempt
			if attempt == 1 || attempt%20 == 0 {
				log.Warn("write failed, retrying (the records stay uncommitted)", "attempt", attempt, "batch", n, "err", err)
			}
		},
		func() error { return c.Batch.Write(ctx) })
	switch {
	case err == nil:
		if failed > 0 {
			log.Info("store writable again", "attempts", failed+1, "batch", n)
		}
		return nil
	case ctx.Err() != nil:
		return nil
	}
	return fmt.Errorf("%s: write a batch of %d: %w", c.Group, n, err)
}

// memberLag is the group's lag on the partitions this member owns: the records not written to
// the store yet.
func memberLag(cl *kgo.Client, group string) func(context.Context) (map[Partition]int64, bool) {
	adm := kadm.NewClient(cl)
	return func(ctx context.Context) (map[Partition]int64, bool) {
		member, _ := cl.GroupMetadata()
		lags, err := adm.Lag(ctx, group)
		if err != nil || member == "" {
			return nil, false
		}
		mine := map[Partition]int64{}
		if l, ok := lags[group]; ok && l.Error() == nil {
			for _, ps := range l.Lag {
				for _, p := range ps {
					if p.Member != nil && p.Member.MemberID == member {
						mine[Partition{p.Topic, p.Partition}] = p.Lag
					}
				}
			}
		}
		return mine, true
	}
}
