package redis

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"
	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/obs"
)

// memberPeriod keys a member's entry on one period of a board.
type memberPeriod struct {
	board    string
	period   board.Period
	periodID string
	member   string
}

// ScoresWriter writes the score boards (keys of BoardWriter) from the scores processor's
// updates. It coalesces them per member and period (the latest wins: every update is the
// member's whole entry, scope and scopes left included, and a member's updates come in
// order), flushes them in one pipeline per interval, retries a failed flush with backoff for
// as long as it takes, and only then calls the done callbacks, oldest first; after a flush
// that failed for good it acknowledges nothing.
type ScoresWriter struct {
	w       *BoardWriter
	shards  map[string]int
	log     *slog.Logger
	skipped prometheus.Counter
	skipLog obs.LogLimiter
	q       *async[memberPeriod, board.ScoreUpdate, []board.ScoreUpdate]
}

// NewScoresWriter returns a writer of the given boards on rdb. Call Run to start flushing.
func NewScoresWriter(rdb goredis.UniversalClient, boards []*board.Board, opts FlushOptions) *ScoresWriter {
	opts.defaults()
	w := &ScoresWriter{w: NewBoardWriter(rdb), shards: make(map[string]int, len(boards)), log: opts.Logger,
		skipped: obs.SinkRowsSkipped.WithLabelValues("redis-scores")}
	for _, b := range boards {
		w.shards[b.Name] = b.Shards
	}
	w.q = newAsync(opts.async("redis-scores"), addScores, w.write, func(u *board.ScoreUpdate) int64 { return u.ReachedMs })
	return w
}

// Submit queues the updates of one record (none after a dead-lettered one) and done. It
// blocks while MaxPending records wait.
func (w *ScoresWriter) Submit(us []board.ScoreUpdate, done func(error)) { w.q.submit(us, done) }

func addScores(b *asyncBatch[memberPeriod, board.ScoreUpdate], us []board.ScoreUpdate) {
	for _, u := range us {
		k := memberPeriod{u.Board, u.Period, u.PeriodID, u.Member}
		p, ok := b.items[k]
		if !ok {
			p = b.alloc()
			b.items[k] = p
		}
		*p = u
	}
}

// Run flushes every Interval (or sooner when a batch is full) until ctx is cancelled, then
// makes one last attempt to flush what is queued. Cancel ctx only after the processor that
// submits has stopped. If a flush fails for good, its records and every record submitted
// after it get an error (never an acknowledgement) and Run returns it: processor and writer
// must be started again together.
func (w *ScoresWriter) Run(ctx context.Context) error { return w.q.run(ctx) }

// Err returns the first failure of the writer: a write that failed, or a record submitted
// after it stopped.
func (w *ScoresWriter) Err() error { return w.q.err() }

// write sends one pipeline: per member-period its entry on the global board and on its
// scope's, and its removal from the scopes it left (from all of them when it was deleted).
// An update the boards cannot hold is skipped and logged (it can never be written; the
// processor's rules keep them out).
func (w *ScoresWriter) write(ctx context.Context, b *asyncBatch[memberPeriod, board.ScoreUpdate]) error {
	writes := make([]BoardWrite, 0, 2*len(b.items))
	for u := range b.values() {
		shards, ok := w.shards[u.Board]
		if !ok {
			w.skip(u, fmt.Errorf("board %q is not declared", u.Board))
			continue
		}
		if u.Present {
			if _, err := entryPrefixOf(u.Score, u.ReachedMs); err != nil {
				w.skip(u, err)
				continue
			}
		}
		ref := BoardRef{Board: u.Board, Period: u.Period, PeriodID: u.PeriodID, Shards: shards}
		x := BoardWrite{Ref: ref, Member: u.Member, Present: u.Present, Score: u.Score, ReachedMs: u.ReachedMs, ExpireAt: u.ExpireAt}
		writes = append(writes, x)
		if u.Scope != "" {
			x.Ref.Scope = u.Scope
			writes = append(writes, x)
		}
		for _, l := range u.Left {
			if l != u.Scope {
				x.Ref.Scope, x.Present = l, false
				writes = append(writes, x)
			}
		}
	}
	// One pipeline per chunk: a reply is awaited under one read deadline for a whole pipeline,
	// and a script call is slow on a small server (miniredis starts a Lua state per call).
	for len(writes) > 0 {
		n := min(len(writes), maxWritesPerPipeline)
		if err := w.w.Write(ctx, writes[:n]); err != nil {
			return fmt.Errorf("redis sink: %d member-periods: %w", len(b.items), err)
		}
		writes = writes[n:]
	}
	return nil
}

// maxWritesPerPipeline bounds the board writes of one pipeline. A flush of more sends several
// in turn; a failed one fails the flush, which is retried whole (every write is absolute).
const maxWritesPerPipeline = 2_000

func (w *ScoresWriter) skip(u *board.ScoreUpdate, err error) {
	w.skipped.Inc()
	w.skipLog.Log(context.Background(), w.log, slog.LevelError, "redis sink: score update skipped, it can never be written", "board", u.Board,
		"period", u.Period, "period_id", u.PeriodID, "member", u.Member, "err", err)
}
