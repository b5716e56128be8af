package merge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lovoo/goka"
	"github.com/segmentio/encoding/json"

	"github.com/rankstream/rankstream/internal/platform/backoff"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// Publisher stores a merged snapshot (Redis, ClickHouse). Publish must be idempotent: after a
// crash the same snapshot can be published again.
type Publisher interface {
	Publish(ctx context.Context, s topics.TopKSnapshot) error
}

type pendingCodec struct{}

func (pendingCodec) Encode(v any) ([]byte, error) { return json.Marshal(v) }

func (pendingCodec) Decode(b []byte) (any, error) {
	p := new(pending)
	if err := json.Unmarshal(b, p); err != nil {
		return nil, fmt.Errorf("hot: merge state: %w", err)
	}
	p.upgrade()
	return p, nil
}

// sweepVisitor names the merge group's visitor edge: the periodic sweep over its table.
const sweepVisitor = "sweep"

type merger struct {
	rules mergeRules
	pub   Publisher
	log   *slog.Logger
}

// Group is the merge group's logical name; its table holds one window's state per window end.
const Group = topics.HotMergeGroup

// Config shapes the merge; zero values take the defaults in brackets.
type Config struct {
	Names topics.Names
	// Partitions of hot.partials' producer, the hot group: every one must report a window.
	Partitions int
	K          int // items per snapshot [100]
	// MergeWait is how long (wall clock, from its first partial reaching the merge) a window
	// waits for its missing partitions before it is published without them
	// [DefaultMergeWait].
	MergeWait time.Duration
	Log       *slog.Logger
}

// DefaultMergeWait is the default of Config.MergeWait.
const DefaultMergeWait = 10 * time.Second

func (c *Config) defaults() {
	if c.Partitions <= 0 {
		c.Partitions = topics.DefaultPartitions
	}
	if c.K <= 0 {
		c.K = 100
	}
	if c.MergeWait <= 0 {
		c.MergeWait = DefaultMergeWait
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
}

// Graph returns the merge group's graph: partials are keyed by window end, so all the
// partials of a window meet in one partition. Once every partition reported, or cfg.MergeWait
// after the first partial arrived (wall clock), their lists (disjoint, since terms are
// partitioned) are merged exactly and published, with the partitions still missing; a late
// partial republishes the window with fewer missing. The table keeps each window's entry for
// mergeTTL after its last publication, so that a partial sent again does not publish again.
// The waits and the expiry run in the sweep visitor (Run calls it periodically).
func Graph(cfg Config, pub Publisher) *goka.GroupGraph {
	cfg.defaults()
	m := &merger{
		rules: mergeRules{partitions: cfg.Partitions, k: cfg.K, wait: cfg.MergeWait, ttl: mergeTTL, started: time.Now()},
		pub:   pub,
		log:   cfg.Log,
	}
	return goka.DefineGroup(cfg.Names.Group(Group),
		goka.Input(cfg.Names.Stream(topics.HotPartials), topics.HotPartialCodec{}, m.merge),
		goka.Persist(pendingCodec{}),
		goka.Visitor(sweepVisitor, m.sweep),
	)
}

// sweepEvery is how often Run sweeps the merge table for a wait of wait: a quarter of
// it, from 100 ms to 1 s.
func sweepEvery(wait time.Duration) time.Duration {
	return min(max(wait/4, 100*time.Millisecond), time.Second)
}

// Run runs the merge group until ctx ends, sweeping its table periodically (goka's
// VisitAll) to publish windows whose wait ran out and to delete expired entries.
func Run(ctx context.Context, cfg Config, pub Publisher, brokers []string, opts ...goka.ProcessorOption) error {
	cfg.defaults()
	proc, err := goka.NewProcessor(brokers, Graph(cfg, pub), opts...)
	if err != nil {
		return fmt.Errorf("hot merge: %w", err)
	}
	// The processor stops only after the sweeper (kafka.Run's shutdown order): a VisitAll
	// that starts while goka stops a partition can send on the partition's closed visit channel
	// (goka v1.1.16, PartitionProcessor.VisitValues) and panic.
	sweep := func(ctx context.Context) { runSweeper(ctx, proc, sweepEvery(cfg.MergeWait), cfg.Log) }
	if err := kafka.Run(ctx, proc, cfg.Names.Group(Group), cfg.Log, sweep); err != nil {
		return fmt.Errorf("hot merge: %w", err)
	}
	return nil
}

// runSweeper visits the whole merge table every period until ctx ends, and only while the
// processor runs: not during a rebalance, when partitions are being stopped or set up.
func runSweeper(ctx context.Context, proc *goka.Processor, every time.Duration, log *slog.Logger) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-proc.Done():
			return
		case <-tick.C:
		}
		if !proc.StateReader().IsState(goka.ProcStateRunning) {
			continue
		}
		if err := proc.VisitAll(ctx, sweepVisitor, nil); err != nil && ctx.Err() == nil {
			log.Debug("hot merge: sweep interrupted", "err", err) // a rebalance: the next tick sweeps again
		}
	}
}

// merge takes one partition's partial of a window.
func (m *merger) merge(ctx goka.Context, msg any) {
	part, ok := msg.(*topics.HotPartial)
	if !ok {
		return
	}
	if part.Partition < 0 || int(part.Partition) >= m.rules.partitions {
		m.log.Warn("hot merge: partial of a partition out of range dropped", "partition", part.Partition,
			"partitions", m.rules.partitions, "window_end_ms", part.WindowEnd)
		return
	}
	now := time.Now()
	st, changed, due := m.rules.onPartial(state(ctx), part, now)
	if due && m.publish(ctx, st, now) {
		changed = true
	}
	if changed {
		ctx.SetValue(st)
	}
}

// sweep is the visitor: it publishes a window whose wait ran out, or deletes an expired entry.
func (m *merger) sweep(ctx goka.Context, _ any) {
	st := state(ctx)
	if st == nil {
		return // deleted since the sweep listed it
	}
	now := time.Now()
	switch due, expired := m.rules.onTick(st, now); {
	case expired:
		ctx.Delete()
	case due && m.publish(ctx, st, now):
		ctx.SetValue(st)
	}
}

// state is the merge table's value of the callback's key, nil when there is none.
func state(ctx goka.Context) *pending {
	st, _ := ctx.Value().(*pending)
	return st
}

// publish publishes st's snapshot, retrying with backoff until it is stored, and records the
// publication in st. A snapshot that fails with topics.ErrInvalidSnapshot (no store could ever
// take it) is not retried: it is logged, counted (rankstream_hot_snapshots_rejected_total) and
// recorded as rejected, its merged items kept in the table for inspection. publish returns false,
// leaving st unchanged, only when the partition stops (shutdown, rebalance): the state is kept
// as due, and whoever owns the partition next publishes it. The record is committed only
// after, so nothing is lost while a store is down.
func (m *merger) publish(ctx goka.Context, st *pending, now time.Time) bool {
	snap := m.rules.snapshot(st, now)
	if len(snap.MissingPartitions) > 0 {
		m.log.Warn("hot merge: publishing a window with partitions missing", "window_end", snap.WindowEnd,
			"missing", snap.MissingPartitions, "waited", now.Sub(time.UnixMilli(st.FirstMs)).Round(time.Millisecond))
	}
	err := backoff.Retry(ctx.Context(), backoff.New(50*time.Millisecond, 5*time.Second),
		func(err error) bool { return !errors.Is(err, topics.ErrInvalidSnapshot) },
		func(attempt int, err error, _ time.Duration) {
			m.log.Warn("hot merge: publish failed, retrying", "attempt", attempt, "window_end", snap.WindowEnd, "err", err)
		},
		func() error { return m.pub.Publish(ctx.Context(), snap) })
	switch {
	case err == nil:
		m.rules.published(st, now)
		return true
	case errors.Is(err, topics.ErrInvalidSnapshot):
		obs.HotSnapshotsRejected.Inc()
		m.log.Error("hot merge: invalid snapshot not published (its items stay in the merge table)",
			"window_end", snap.WindowEnd, "partitions", st.Reported, "err", err)
		m.rules.rejected(st, now, err.Error())
		return true
	}
	return false // revoked or stopping: the window stays due in the table
}
