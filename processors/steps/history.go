package steps

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// HistoryGroup is the consumer group that writes the daily steps history: it reads the steps
// group's table (its changelog topic, where every change of a user's State lands) and writes
// the days that changed to the history store.
const HistoryGroup = topics.StepsHistoryGroup

// DefaultHistoryInterval is how long the history writer gathers changes before it writes
// them: every change reaches the store within about this long, so a day's final value is
// stored within it after the day's last change, at the latest when the day closes.
const DefaultHistoryInterval = time.Minute

// maxHistoryBatch is the most days one write takes; a batch this size is written at once.
const maxHistoryBatch = 50_000

// maxHistoryWritten bounds the days the writer remembers having written; past it, it forgets
// them all (and writes them again once: the writes are idempotent).
const maxHistoryWritten = 1 << 20

// HistoryDay is one user's merged day, a row of the history.
type HistoryDay struct {
	User      string
	Day       board.Day
	Steps     int64
	ReachedMs int64  // when the value was reached (event time)
	Region    string // the region the user is ranked in that day ("": none)
}

// HistoryStore is the daily steps history store.
type HistoryStore interface {
	// Check returns an error for a day the store can never take.
	Check(d *HistoryDay) error
	// WriteDays stores days that passed Check, idempotently and versioned so that a day's
	// largest value wins whatever the order the writes land in.
	WriteDays(ctx context.Context, days []HistoryDay) error
	// Retryable tells whether a failed WriteDays may succeed later with the same days.
	Retryable(err error) bool
}

// HistoryReplay is what a replay of the history writer (stopped) moves: its offsets on the
// steps group's table, so that it writes every day the table holds again (days pruned from
// the table stay as written). The store keeps one visible row per user and day.
func HistoryReplay(n topics.Names) kafka.Replay {
	return kafka.Replay{Offsets: []kafka.GroupTopic{{Group: n.Group(HistoryGroup), Topic: goka.Stream(n.Table(Group))}}}
}

// RunHistory writes the daily steps history until ctx ends (kafka.BatchConsumer): it reads
// the steps group's table as group steps-history, gathers for interval (0:
// DefaultHistoryInterval) the days whose value, reach time or region changed (the latest of
// each user-day), writes them in one batch with retries, and commits only once the store took
// them. A state that cannot be decoded, or a day the store can never take, is logged, counted
// in rankstream_history_skipped_total and skipped.
func RunHistory(ctx context.Context, kc kafka.Config, store HistoryStore, interval time.Duration, log *slog.Logger) error {
	if interval <= 0 {
		interval = DefaultHistoryInterval
	}
	topic := string(kc.Names.Table(Group))
	return kafka.BatchConsumer{
		Group:    string(kc.Names.Group(HistoryGroup)),
		Topic:    topic,
		Batch:    &historyBatch{store: store, pending: map[dayKey]HistoryDay{}, written: map[dayKey]HistoryDay{}},
		MaxBatch: maxHistoryBatch,
		Interval: interval,
		Skipped:  obs.HistorySkipped.WithLabelValues(topic),
		Log:      log,
	}.Run(ctx, kc)
}

type dayKey struct {
	user string
	day  board.Day
}

// historyBatch gathers the latest value of each user-day seen in the table since the last
// write, leaving out days as this writer last wrote them (a change of one day re-sends the
// user's whole State, every day of the retention).
type historyBatch struct {
	store   HistoryStore
	pending map[dayKey]HistoryDay
	written map[dayKey]HistoryDay
}

func (b *historyBatch) Add(r *kgo.Record) error {
	if r.Value == nil {
		return nil // a user's state deleted: the history keeps what was written
	}
	var s State
	if err := s.UnmarshalBinary(r.Value); err != nil {
		return fmt.Errorf("steps history: user %q: %w", r.Key, err)
	}
	var errs []error
	for _, d := range s.Days {
		h := HistoryDay{User: string(r.Key), Day: d.Day, Steps: d.Steps, ReachedMs: d.ReachedMs, Region: d.Region}
		if err := b.store.Check(&h); err != nil {
			errs = append(errs, fmt.Errorf("steps history: user %q, day %s: %w", r.Key, d.Day, err))
			continue
		}
		k := dayKey{h.User, h.Day}
		if w, ok := b.written[k]; ok && w == h {
			delete(b.pending, k) // an older value of this batch must not be written over it
			continue
		}
		b.pending[k] = h
	}
	return errors.Join(errs...)
}

func (b *historyBatch) Len() int { return len(b.pending) }

func (b *historyBatch) Write(ctx context.Context) error {
	days := make([]HistoryDay, 0, len(b.pending))
	for _, d := range b.pending {
		days = append(days, d)
	}
	if err := b.store.WriteDays(ctx, days); err != nil {
		return err
	}
	if len(b.written)+len(b.pending) > maxHistoryWritten {
		clear(b.written)
	}
	for k, d := range b.pending {
		b.written[k] = d
	}
	return nil
}

func (b *historyBatch) Retryable(err error) bool { return b.store.Retryable(err) }
func (b *historyBatch) Reset()                   { clear(b.pending) }
