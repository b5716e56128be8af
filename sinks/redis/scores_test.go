package redis_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

func scoreBoards(t *testing.T) []*board.Board {
	t.Helper()
	bs, err := board.NewBoards([]board.Spec{
		{Name: "arena", Periods: []string{"d", "total"}, TZ: "UTC", Shards: "4"},
		{Name: "solo", Periods: []string{"total"}, TZ: "UTC"},
	})
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

func runScoresWriter(t *testing.T, rdb goredis.UniversalClient, opts rsredis.FlushOptions) *rsredis.ScoresWriter {
	t.Helper()
	opts.Logger = quiet
	w := rsredis.NewScoresWriter(rdb, scoreBoards(t), opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

func page(t *testing.T, r *rsredis.Reader, ref rsredis.BoardRef) []rsredis.Ranked {
	t.Helper()
	_, rows, err := r.BoardPage(context.Background(), ref, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestScoresWriterWritesBoards: entries reach the global and scope boards of every period,
// a scope the member left loses it, a delete removes it everywhere, the latest of several
// updates of one member-period in a batch wins, an update that can never be written is
// skipped and counted without holding the others back, and acks come in submission order.
func TestScoresWriterWritesBoards(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		r := rsredis.NewReader(rdb)
		w := runScoresWriter(t, rdb, rsredis.FlushOptions{Interval: 20 * time.Millisecond})
		exp := time.Now().Add(time.Hour).Truncate(time.Second)
		day := func(member string, score, reached int64, scope string, left ...string) board.ScoreUpdate {
			return board.ScoreUpdate{Board: "arena", Member: member, Period: board.PeriodDay, PeriodID: "20261130", ExpireAt: exp,
				Present: true, Score: score, ReachedMs: reached, Scope: scope, Left: left}
		}
		total := func(u board.ScoreUpdate) board.ScoreUpdate {
			u.Period, u.PeriodID, u.ExpireAt = board.PeriodTotal, "total", time.Time{}
			return u
		}
		skipped := obs.SinkRowsSkipped.WithLabelValues("redis-scores")
		skippedBefore := counterValue(skipped)
		var a acks
		submit := func(i int, us ...board.ScoreUpdate) { w.Submit(us, a.done(i)) }
		submit(0, day("ann", 10, 5, "eu"), total(day("ann", 10, 5, "eu")))
		submit(1, day("bob", 10, 4, "eu"), total(day("bob", 10, 4, "eu")))
		submit(2) // a dead-lettered record
		submit(3, day("cat", 7, 1, "us"), total(day("cat", 7, 1, "us")))
		submit(4, day("cat", 12, 8, "eu", "us"), total(day("cat", 12, 8, "eu", "us"))) // cat moves to eu, in the same batch
		submit(5, board.ScoreUpdate{Board: "nope", Member: "x", Period: board.PeriodTotal, PeriodID: "total", Present: true, Score: 1})
		waitAcks(t, &a, 6)
		// bob is deleted from every period, in a later batch.
		del := day("bob", 0, 0, "eu")
		del.Present = false
		submit(6, del, total(del))
		submit(7, board.ScoreUpdate{Board: "solo", Member: "dan", Period: board.PeriodTotal, PeriodID: "total", Present: true, Score: -board.MaxScore, ReachedMs: 1<<48 - 1})
		waitAcks(t, &a, 8)
		for i, got := range a.got {
			if got != i || a.errs[i] != nil {
				t.Fatalf("ack %d = record %d (err %v): want submission order without errors", i, got, a.errs[i])
			}
		}
		if d := counterValue(skipped) - skippedBefore; d != 1 {
			t.Fatalf("%v updates skipped, want 1 (the unknown board)", d)
		}
		ref := rsredis.BoardRef{Board: "arena", Period: board.PeriodDay, PeriodID: "20261130", Shards: 4}
		tot := rsredis.BoardRef{Board: "arena", Period: board.PeriodTotal, Shards: 4}
		want := []rsredis.Ranked{{Rank: 1, Member: "cat", Score: 12, ReachedMs: 8}, {Rank: 2, Member: "ann", Score: 10, ReachedMs: 5}}
		for _, ref := range []rsredis.BoardRef{ref, tot} {
			if got := page(t, r, ref); !slices.Equal(got, want) {
				t.Fatalf("%s: %+v, want %+v", rsredis.ScoreBoardKey(ref, 0), got, want)
			}
			ref.Scope = "eu"
			if got := page(t, r, ref); !slices.Equal(got, want) {
				t.Fatalf("scope eu of %s: %+v, want %+v", rsredis.ScoreBoardKey(ref, 0), got, want)
			}
			ref.Scope = "us"
			if got := page(t, r, ref); len(got) != 0 {
				t.Fatalf("scope us: %+v, want nobody (cat left it)", got)
			}
		}
		if got := page(t, r, rsredis.BoardRef{Board: "solo", Period: board.PeriodTotal, Shards: 1}); len(got) != 1 || got[0].Score != -board.MaxScore {
			t.Fatalf("solo: %+v", got)
		}
		if at, _ := rdb.ExpireTime(context.Background(), rsredis.ScoreBoardKey(ref, rsredis.ShardOf("ann", 4))).Result(); at != time.Duration(exp.Unix())*time.Second {
			t.Fatalf("day board expires at %v, want %v", at, exp.Unix())
		}
	})
}

// TestScoresWriterHoldsAcksWhileRedisIsDown: while Redis cannot be reached the writer retries
// with backoff and acknowledges nothing; once Redis is back everything is written and
// acknowledged in order. A write that fails for good acknowledges nothing after it.
func TestScoresWriterHoldsAcksWhileRedisIsDown(t *testing.T) {
	addr, db := testenv.RedisAddr(t)
	real := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
	t.Cleanup(func() { real.Close() })
	proxy := testenv.NewProxy(t, addr)
	rdb := goredis.NewClient(&goredis.Options{Addr: proxy.Addr(), DB: db, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	w := rsredis.NewScoresWriter(rdb, scoreBoards(t), rsredis.FlushOptions{Interval: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Logger: quiet})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(ctx) }()

	proxy.SetDown(true)
	var a acks
	submit := func(i int) {
		w.Submit([]board.ScoreUpdate{{Board: "solo", Member: string(rune('a' + i%26)), Period: board.PeriodTotal, PeriodID: "total",
			Present: true, Score: int64(i), ReachedMs: 1}}, a.done(i))
	}
	for i := range 50 {
		submit(i)
	}
	time.Sleep(1500 * time.Millisecond)
	if n := a.count(); n != 0 {
		t.Fatalf("%d records acknowledged while Redis was down", n)
	}
	proxy.SetDown(false)
	waitAcks(t, &a, 50)
	for i, got := range a.got {
		if got != i || a.errs[i] != nil {
			t.Fatalf("ack %d = record %d (err %v): want submission order without errors", i, got, a.errs[i])
		}
	}
	solo := rsredis.BoardRef{Board: "solo", Period: board.PeriodTotal, Shards: 1}
	if n := real.ZCard(context.Background(), rsredis.ScoreBoardKey(solo, 0)).Val(); n != 26 {
		t.Fatalf("board has %d members after recovery, want 26", n)
	}

	// Down again, and the writer stops before Redis comes back: nothing is acknowledged.
	proxy.SetDown(true)
	for i := 50; i < 53; i++ {
		submit(i)
	}
	failures := obs.SinkWriteErrors.WithLabelValues("redis-scores")
	before := counterValue(failures)
	testenv.WaitFor(t, 10*time.Second, "a flush to fail", func() bool { return counterValue(failures) > before })
	cancel()
	select {
	case err := <-ran:
		if !errors.Is(err, rsredis.ErrClosed) {
			t.Fatalf("Run = %v, want an error wrapping ErrClosed", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return")
	}
	submit(53)
	waitAcks(t, &a, 54)
	for i := 50; i < 54; i++ {
		if a.errs[i] == nil {
			t.Fatalf("record %d acknowledged after a failed write", a.got[i])
		}
	}
	if w.Err() == nil {
		t.Fatal("Err() = nil after a failed write")
	}
}

// TestScoresWriterWritesLargeBatchesInPipelines: a flush of more board writes than one
// pipeline takes (2,500 members on the global and a scope board: 5,000 writes) writes them
// all, in several pipelines, and acknowledges once.
func TestScoresWriterWritesLargeBatchesInPipelines(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		w := runScoresWriter(t, rdb, rsredis.FlushOptions{Interval: 300 * time.Millisecond})
		var us []board.ScoreUpdate
		for i := range 2_500 {
			us = append(us, board.ScoreUpdate{Board: "arena", Member: fmt.Sprintf("m%04d", i), Period: board.PeriodTotal, PeriodID: "total",
				Present: true, Score: int64(i), ReachedMs: 1, Scope: "eu"})
		}
		var a acks
		w.Submit(us, a.done(0))
		waitAcks(t, &a, 1)
		if a.errs[0] != nil {
			t.Fatal(a.errs[0])
		}
		r := rsredis.NewReader(rdb)
		for _, scope := range []string{"", "eu"} {
			total, rows, err := r.BoardPage(context.Background(), rsredis.BoardRef{Board: "arena", Period: board.PeriodTotal, Scope: scope, Shards: 4}, 0, 1)
			if err != nil || total != 2_500 || rows[0].Member != "m2499" {
				t.Fatalf("scope %q: %d members, first %+v (%v)", scope, total, rows, err)
			}
		}
	})
}
