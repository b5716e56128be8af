package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lovoo/goka"
	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/backoff"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// Archive defaults.
const (
	// DefaultGrace is how long after a period's end its board is archived: late ops
	// (a producer's retries, a backlog) still land on it before.
	DefaultGrace = 15 * time.Minute
	// archiveInterval is how often the archiver looks for finished periods (a look costs a few
	// offset requests and one EXISTS per period kept).
	archiveInterval = 10 * time.Second
	// archiveChunk is how many members are read from Redis and written to ClickHouse at once.
	archiveChunk = 10_000
)

// Store takes the rows of board_archive (rsclickhouse.Sink).
type Store interface {
	WriteBoardArchive(ctx context.Context, rows []rsclickhouse.BoardArchiveRow) error
}

// Archiver copies the final board of every finished period to ClickHouse's board_archive,
// once: the global and every scope board of every period of every declared board (not total,
// which never ends), and the daily steps boards (global and regions); a scope board's period
// is "<period>:s:<scope>", its scopes found by one SCAN when a period is to be archived.
//
// A period is due Grace after its end, in record time: once its processor group has stored in
// Redis every input record up to its end plus Grace (ScoresDone, StepsDone), so that a backlog
// (a processor down, then catching up) is on the board before it is archived; and never before
// that instant on the wall clock. Each board is read from Redis in chunks in rank order and
// written in batches (each retried with backoff while ClickHouse is down), and a mark beside
// it (rsredis.ArchiveMarks), expiring with it, then records that it was archived, so a restart
// does not archive it again (the global board's mark last: it says the period is done). A crash
// between the rows and the mark archives the period again: the same rows, under a later
// archived_at, which board_archive's key collapses (FINAL shows each rank once). Periods
// whose board expired already (retention) are not looked at.
type Archiver struct {
	Boards []*board.Board
	// StepsRetention is the steps boards' retention; 0 leaves the steps boards out.
	StepsRetention time.Duration
	Grace          time.Duration // DefaultGrace when 0
	// ScoresDone and StepsDone, when not nil, return the record time up to which the scores
	// (steps) group has stored its input in Redis (ProcessedUntil); nil: the wall clock.
	ScoresDone, StepsDone func(ctx context.Context, now time.Time) (time.Time, error)
	Redis                 goredis.UniversalClient
	Store                 Store
	Log                   *slog.Logger
}

// archiveJob is one finished board to archive.
type archiveJob struct {
	board, period string    // as in board_archive
	key           string    // the board's (first shard's) Redis key: where its mark goes
	expireAt      time.Time // when the board expires, and its mark with it
	scan          func(ctx context.Context, r *rsredis.Reader, fn func([]rsredis.Ranked) error) error
	// scopesKey finds the period's scope boards in rsredis.Reader.BoardScopes' answer, and
	// scoped is the job of one of them (nil for a scope board's own job).
	scopesKey string
	scoped    func(scope string) archiveJob
}

// Run archives what is due every archiveInterval (10 s) until ctx ends.
func (a Archiver) Run(ctx context.Context) error {
	kafka.Up(ctx) // a unit without a goka processor: ready while it runs
	t := time.NewTicker(archiveInterval)
	defer t.Stop()
	for {
		if _, err := a.Once(ctx, time.Now()); err != nil && ctx.Err() == nil {
			a.Log.Error("archive", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Once archives every board due at now that was not archived yet and returns how many it
// archived. A board whose rows ClickHouse refuses for good is logged and left for the next
// run; Redis or ClickHouse being down is retried until ctx ends.
func (a Archiver) Once(ctx context.Context, now time.Time) (int, error) {
	scoresAt, stepsAt := now, now
	for _, d := range []struct {
		done func(context.Context, time.Time) (time.Time, error)
		at   *time.Time
	}{{a.ScoresDone, &scoresAt}, {a.StepsDone, &stepsAt}} {
		if d.done == nil {
			continue
		}
		t, err := d.done(ctx, now)
		if err != nil {
			return 0, fmt.Errorf("archive: progress of the processors: %w", err)
		}
		if t.Before(now) {
			*d.at = t
		}
	}
	jobs := a.due(now, scoresAt, stepsAt)
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = j.key
	}
	var marked []bool
	err := backoff.Retry(ctx, backoff.New(time.Second, time.Minute), nil, a.notify("read archive marks"), func() (err error) {
		marked, err = rsredis.NewArchiveMarks(a.Redis).Archived(ctx, keys)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("archive: %w", err)
	}
	var scopes map[string][]string // found once, when a period is to be archived
	n := 0
	for i, j := range jobs {
		if marked[i] {
			continue
		}
		if scopes == nil {
			err := backoff.Retry(ctx, backoff.New(time.Second, time.Minute), nil, a.notify("find scope boards"), func() (err error) {
				scopes, err = rsredis.NewReader(a.Redis).BoardScopes(ctx)
				return err
			})
			if err != nil {
				return n, fmt.Errorf("archive: %w", err)
			}
		}
		// The period's scope boards first, each marked on its own; the global board's mark,
		// last, says the period is done.
		todo := []archiveJob{}
		for _, sc := range scopes[j.scopesKey] {
			todo = append(todo, j.scoped(sc))
		}
		keys := make([]string, len(todo))
		for i, sj := range todo {
			keys[i] = sj.key
		}
		var done []bool
		err := backoff.Retry(ctx, backoff.New(time.Second, time.Minute), nil, a.notify("read archive marks"), func() (err error) {
			done, err = rsredis.NewArchiveMarks(a.Redis).Archived(ctx, keys)
			return err
		})
		if err != nil {
			return n, fmt.Errorf("archive: %w", err)
		}
		for i, sj := range todo {
			if done[i] {
				continue
			}
			if n, err = a.archiveCounting(ctx, sj, now, n); err != nil {
				return n, err
			}
		}
		if n, err = a.archiveCounting(ctx, j, now, n); err != nil {
			return n, err
		}
	}
	return n, nil
}

// archiveCounting archives j and returns n plus one; a board ClickHouse refuses for good is
// logged and left for the next run (not counted).
func (a Archiver) archiveCounting(ctx context.Context, j archiveJob, now time.Time, n int) (int, error) {
	err := a.archive(ctx, j, now)
	if errors.Is(err, rsclickhouse.ErrInvalidRow) {
		a.Log.Error("archive: board refused", "board", j.board, "period", j.period, "err", err)
		return n, nil
	}
	if err != nil {
		return n, err
	}
	return n + 1, nil
}

// archive writes one board's rows, then its mark.
func (a Archiver) archive(ctx context.Context, j archiveJob, now time.Time) error {
	at := now.UTC().Truncate(time.Second)
	retryable := func(err error) bool { return !errors.Is(err, rsclickhouse.ErrInvalidRow) }
	var members int64
	err := backoff.Retry(ctx, backoff.New(time.Second, time.Minute), retryable, a.notify("archive "+j.board+" "+j.period), func() error {
		members = 0
		return j.scan(ctx, rsredis.NewReader(a.Redis), func(rows []rsredis.Ranked) error {
			out := make([]rsclickhouse.BoardArchiveRow, len(rows))
			for i, r := range rows {
				out[i] = rsclickhouse.BoardArchiveRow{Board: j.board, Period: j.period, Rank: uint32(r.Rank),
					Member: r.Member, Score: r.Score, ArchivedAt: at}
			}
			members += int64(len(rows))
			return a.Store.WriteBoardArchive(ctx, out)
		})
	})
	if err != nil {
		return fmt.Errorf("archive %s %s: %w", j.board, j.period, err)
	}
	err = backoff.Retry(ctx, backoff.New(time.Second, time.Minute), nil, a.notify("mark "+j.key), func() error {
		return rsredis.NewArchiveMarks(a.Redis).MarkArchived(ctx, j.key, members, j.expireAt)
	})
	if err != nil {
		return fmt.Errorf("archive %s %s: %w", j.board, j.period, err)
	}
	a.Log.Info("archived", "board", j.board, "period", j.period, "members", members)
	return nil
}

func (a Archiver) notify(what string) func(int, error, time.Duration) {
	return func(attempt int, err error, wait time.Duration) {
		a.Log.Warn("archive: retrying", "what", what, "attempt", attempt, "wait", wait, "err", err)
	}
}

// due lists the boards of every period that ended at least the grace before the time its
// processor has stored its input up to (scoresAt, stepsAt: now at the latest) and whose board
// has not expired at now.
func (a Archiver) due(now, scoresAt, stepsAt time.Time) []archiveJob {
	grace := a.Grace
	if grace == 0 {
		grace = DefaultGrace
	}
	var jobs []archiveJob
	for _, b := range a.Boards {
		for _, w := range finishedWindows(b, now, scoresAt.Add(-grace)) {
			job := func(scope string) archiveJob {
				ref := rsredis.BoardRef{Board: b.Name, Period: w.Period, PeriodID: w.ID, Scope: scope, Shards: b.Shards}
				return archiveJob{
					board: b.Name, period: rsclickhouse.ArchivePeriod(w.Period, w.ID, scope),
					key: rsredis.ScoreBoardKey(ref, 0), expireAt: w.End.Add(b.Retention),
					scan: func(ctx context.Context, r *rsredis.Reader, fn func([]rsredis.Ranked) error) error {
						return r.ScanBoard(ctx, ref, archiveChunk, fn)
					},
				}
			}
			j := job("")
			j.scopesKey = rsredis.ScopesKey(rsredis.BoardRef{Board: b.Name, Period: w.Period, PeriodID: w.ID})
			j.scoped = job
			jobs = append(jobs, j)
		}
	}
	if a.StepsRetention > 0 {
		// A local date ends last at UTC-12: Day.LastInstant.
		for d := board.DayOf(now, time.UTC); d.LastInstant().Add(a.StepsRetention).After(now); d = d.AddDays(-1) {
			if d.LastInstant().Add(grace).After(stepsAt) {
				continue
			}
			job := func(region string) archiveJob {
				return archiveJob{
					board: board.StepsBoard, period: rsclickhouse.ArchivePeriod(board.PeriodDay, d.String(), region),
					key: rsredis.StepsBoard(d, region), expireAt: d.LastInstant().Add(a.StepsRetention),
					scan: func(ctx context.Context, r *rsredis.Reader, fn func([]rsredis.Ranked) error) error {
						return r.ScanStepsBoard(ctx, d, region, archiveChunk, fn)
					},
				}
			}
			j := job("")
			j.scopesKey, j.scoped = rsredis.StepsScopesKey(d), job
			jobs = append(jobs, j)
		}
	}
	return jobs
}

// finishedWindows returns b's windows (not total) that ended at or before until and whose
// board has not expired at now (End + Retention after now), latest first per period.
func finishedWindows(b *board.Board, now, until time.Time) []board.Window {
	var out []board.Window
	live := func(w board.Window) bool { return w.End.Add(b.Retention).After(now) }
	for _, p := range b.Periods {
		switch p {
		case board.PeriodTotal:
		case board.PeriodSeason:
			for _, s := range b.Seasons {
				w, _ := b.WindowByID(p, s.Name)
				if !w.End.After(until) && live(w) {
					out = append(out, w)
				}
			}
		default:
			// The window holding until has not ended by then; those before it have.
			w := board.CalendarWindow(p, until, b.Zone)
			for {
				w = board.CalendarWindow(p, w.Start.Add(-time.Nanosecond), b.Zone)
				if !live(w) {
					break
				}
				out = append(out, w)
			}
		}
	}
	return out
}

// ProcessedUntil returns a function telling the record time up to which group has stored its
// input stream (a processor commits a record only once its sink wrote it): the timestamp of
// the first record not committed yet, the earliest over the partitions; now when the group
// committed everything. A partition the group never committed counts from its first record.
func ProcessedUntil(cl *kafka.Client, group goka.Group, stream goka.Stream) func(ctx context.Context, now time.Time) (time.Time, error) {
	g, topic := string(cl.Config().Names.Group(group)), string(cl.Config().Names.Stream(stream))
	return func(ctx context.Context, now time.Time) (time.Time, error) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		committed, err := cl.Admin().FetchOffsetsForTopics(ctx, g, topic)
		if errors.Is(err, kerr.GroupIDNotFound) { // a group that never committed (kfake says so)
			committed, err = nil, nil
		}
		if err != nil {
			return time.Time{}, fmt.Errorf("committed offsets of %s: %w", g, err)
		}
		starts, err := cl.Admin().ListStartOffsets(ctx, topic)
		if err != nil {
			return time.Time{}, fmt.Errorf("start offsets of %s: %w", topic, err)
		}
		ends, err := cl.Admin().ListEndOffsets(ctx, topic)
		if err != nil {
			return time.Time{}, fmt.Errorf("end offsets of %s: %w", topic, err)
		}
		from, to := map[int32]int64{}, map[int32]int64{}
		var listErr error
		ends.Each(func(e kadm.ListedOffset) {
			st, _ := starts.Lookup(topic, e.Partition)
			listErr = errors.Join(listErr, e.Err, st.Err)
			next := st.Offset
			if c, ok := committed.Lookup(topic, e.Partition); ok && c.Err == nil && c.At > next {
				next = c.At
			}
			if next < e.Offset {
				from[e.Partition], to[e.Partition] = next, next+1
			}
		})
		if listErr != nil {
			return time.Time{}, fmt.Errorf("offsets of %s: %w", topic, listErr)
		}
		until := now
		err = cl.Read(ctx, topic, from, to, func(r *kgo.Record) error {
			if r.Timestamp.Before(until) {
				until = r.Timestamp
			}
			return nil
		})
		if err != nil {
			return time.Time{}, fmt.Errorf("first records of %s not committed by %s: %w", topic, g, err)
		}
		return until, nil
	}
}
