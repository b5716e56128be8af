package scores

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/backoff"
	"github.com/rankstream/rankstream/internal/board"
	"github.com/rankstream/rankstream/internal/kafka"
	"github.com/rankstream/rankstream/internal/obs"
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
// ctx ends: each record is a member's whole state after an op; the entries that changed since
// this writer last wrote them become rows, written in one batch per poll (retried with backoff,
// 50 ms to 5 s, while retryable) and committed once written. After a rebalance the writer
// forgets what it wrote (a partition may have been written by another member meanwhile), so
// the first record of each member writes all its entries again. A row the store can never
// take is logged, counted in rankstream_history_skipped_total and skipped; a failure that is
// not retryable ends RunTotals with an error (the supervisor restarts it).
//
// This loop has the shape of processors/history's: it moves onto the shared consumer loop
// once there is one.
func RunTotals(ctx context.Context, kc kafka.Config, store TotalsStore, log *slog.Logger) error {
	group := string(kc.Names.Group(TotalsGroup))
	topic := string(kc.Names.Table(Group))
	log = log.With("group", group)
	var gen atomic.Uint64
	forget := func(context.Context, *kgo.Client, map[string][]int32) { gen.Add(1) }
	cl, err := kc.KgoClient(kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.OnPartitionsRevoked(forget), kgo.OnPartitionsLost(forget))
	if err != nil {
		return fmt.Errorf("scores totals: %w", err)
	}
	defer cl.Close()
	kafka.Up(ctx)
	log.Info("scores totals writer starting", "topic", topic)
	skipped := obs.HistorySkipped.WithLabelValues(topic)
	sent, seen := map[totalKey]totalVal{}, gen.Load()
	var rows []Total
	for {
		fetches := cl.PollRecords(ctx, maxTotalsPoll)
		if ctx.Err() != nil {
			return nil
		}
		fetches.EachError(func(t string, p int32, err error) {
			log.Warn("scores totals: fetch failed (the client retries)", "topic", t, "partition", p, "err", err)
		})
		recs := fetches.Records()
		if len(recs) == 0 {
			if fetches.Err() != nil {
				select { // do not spin on a failing fetch
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			continue
		}
		if g := gen.Load(); g != seen || len(sent) > maxRemembered {
			clear(sent)
			seen = g
		}
		rows = rows[:0]
		for _, r := range recs {
			if r.Value == nil { // the member's state was deleted
				continue
			}
			var s State
			if err := s.UnmarshalBinary(r.Value); err != nil {
				skipped.Inc()
				log.Error("scores totals: undecodable state skipped", "partition", r.Partition, "offset", r.Offset, "err", err)
				continue
			}
			rows = changedTotals(rows, string(r.Key), &s, uint64(r.Offset), sent)
		}
		kept := rows[:0]
		for i := range rows {
			if err := store.CheckTotal(&rows[i]); err != nil {
				skipped.Inc()
				log.Error("scores totals: row the store cannot take skipped", "board", rows[i].Board, "period", rows[i].Period, "member", rows[i].Member, "err", err)
				continue
			}
			kept = append(kept, rows[i])
		}
		if err := writeTotals(ctx, store, kept, log); err != nil {
			clear(sent) // what was remembered was not written
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		if err := cl.CommitRecords(ctx, recs...); err != nil && ctx.Err() == nil {
			log.Warn("scores totals: commit failed", "err", err) // written: whoever owns them next writes them again
		}
	}
}

// writeTotals writes rows, retrying with backoff while the failure is retryable; nil once
// written or when ctx ended.
func writeTotals(ctx context.Context, store TotalsStore, rows []Total, log *slog.Logger) error {
	if len(rows) == 0 {
		return nil
	}
	err := backoff.Retry(ctx, backoff.New(50*time.Millisecond, 5*time.Second), store.Retryable,
		func(attempt int, err error, _ time.Duration) {
			if attempt == 1 || attempt%20 == 0 {
				log.Warn("scores totals: write failed, retrying (the records stay uncommitted)", "attempt", attempt, "rows", len(rows), "err", err)
			}
		},
		func() error { return store.WriteTotals(ctx, rows) })
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("scores totals: write %d rows: %w", len(rows), err)
	}
	return nil
}
