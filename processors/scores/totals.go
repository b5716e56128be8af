package scores

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// TotalsGroup is the consumer group that writes every member's scores to the history store
// (RunTotals).
const TotalsGroup = topics.ScoresTotalsGroup

// Total is a member's score on one period of a board, as the group table holds it after one
// of its records: a row of the history store, identified by (Board, Period, Member).
type Total struct {
	Board, Period, Member string // Period as in the board's Redis key: "d:20261130", "total"
	Score, ReachedMs      int64
	Scope                 string // the member's scope board in the period ("" none)
	Deleted               bool   // the member left the board (Score and ReachedMs 0)
	// Version is the changelog offset of the record: a member's records are in one
	// partition, in the order its ops applied, so the highest version is its latest state.
	Version uint64
}

// TotalsStore is where RunTotals writes.
type TotalsStore interface {
	// CheckTotal returns an error for a row the store can never take.
	CheckTotal(t *Total) error
	// WriteTotals stores rows, idempotently: a row written again changes nothing, and of two
	// rows of one key the higher version stays.
	WriteTotals(ctx context.Context, rows []Total) error
	// Retryable tells whether a failed write may succeed later.
	Retryable(err error) bool
}

// maxRemembered bounds the rows a totals writer remembers; past it it forgets them all, which
// costs writes (each entry once more), never correctness.
const maxRemembered = 1 << 20

type totalKey struct{ board, period, member string }

type totalVal struct {
	score, reachedMs int64
	scope            string
	deleted          bool
}

// changedTotals appends to dst the rows of member's state that differ from what sent holds
// (what this writer wrote since it last forgot), and records them in sent.
func changedTotals(dst []Total, member string, s *State, version uint64, sent map[totalKey]totalVal) []Total {
	for _, bs := range s.Boards {
		for _, e := range bs.Entries {
			period := string(board.PeriodTotal)
			if e.Period != board.PeriodTotal {
				period = string(e.Period) + ":" + e.ID
			}
			k := totalKey{bs.Board, period, member}
			v := totalVal{e.Score, e.ReachedMs, e.Scope, !e.Present}
			if old, ok := sent[k]; ok && old == v {
				continue
			}
			sent[k] = v
			dst = append(dst, Total{Board: bs.Board, Period: period, Member: member, Score: e.Score, ReachedMs: e.ReachedMs,
				Scope: e.Scope, Deleted: !e.Present, Version: version})
		}
	}
	return dst
}

// maxTotalsPoll is the most changelog records one write takes.
const maxTotalsPoll = 2000

// RunTotals consumes the changelog of the scores group's table as group scores-totals until
// ctx ends (kafka.BatchConsumer: written in one batch per poll, retried while retryable,
// committed once written): each record is a member's whole state after an op, and the entries
// that changed since this writer last wrote them become rows. After a rebalance the writer
// forgets what it wrote (a partition may have been written by another member meanwhile), so
// the first record of each member writes all its entries again. A row the store can never take
// is logged, counted in rankstream_history_skipped_total and skipped.
func RunTotals(ctx context.Context, kc kafka.Config, store TotalsStore, log *slog.Logger) error {
	topic := string(kc.Names.Table(Group))
	b := &totalsBatch{store: store, sent: map[totalKey]totalVal{}}
	return kafka.BatchConsumer{
		Group:      string(kc.Names.Group(TotalsGroup)),
		Topic:      topic,
		Batch:      b,
		MaxBatch:   maxTotalsPoll,
		Skipped:    obs.HistorySkipped.WithLabelValues(topic),
		Reassigned: func() { b.gen.Add(1) },
		Log:        log,
	}.Run(ctx, kc)
}

// totalsBatch gathers the rows of the changelog records of one poll.
type totalsBatch struct {
	store   TotalsStore
	gen     atomic.Uint64 // partitions lost so far; sent holds what was written since seen
	seen    uint64
	sent    map[totalKey]totalVal
	rows    []Total
	records int
}

func (b *totalsBatch) Add(r *kgo.Record) error {
	if g := b.gen.Load(); g != b.seen || len(b.sent) > maxRemembered {
		clear(b.sent)
		b.seen = g
	}
	b.records++
	if r.Value == nil { // the member's state was deleted
		return nil
	}
	var s State
	if err := s.UnmarshalBinary(r.Value); err != nil {
		return fmt.Errorf("scores totals: member %q: %w", r.Key, err)
	}
	n := len(b.rows)
	b.rows = changedTotals(b.rows, string(r.Key), &s, uint64(r.Offset), b.sent)
	var errs []error
	kept := b.rows[:n]
	for i := n; i < len(b.rows); i++ {
		if err := b.store.CheckTotal(&b.rows[i]); err != nil {
			errs = append(errs, fmt.Errorf("scores totals: board %s period %s member %q: %w", b.rows[i].Board, b.rows[i].Period, b.rows[i].Member, err))
			continue
		}
		kept = append(kept, b.rows[i])
	}
	b.rows = kept
	return errors.Join(errs...)
}

func (b *totalsBatch) Len() int { return b.records }

func (b *totalsBatch) Write(ctx context.Context) error {
	if len(b.rows) == 0 {
		return nil
	}
	return b.store.WriteTotals(ctx, b.rows)
}

func (b *totalsBatch) Retryable(err error) bool { return b.store.Retryable(err) }

func (b *totalsBatch) Reset() { b.rows, b.records = b.rows[:0], 0 }
