package archive_test

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/archive"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/scores"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

type archived struct {
	Rank   uint32 `ch:"rank"`
	Member string `ch:"member"`
	Score  int64  `ch:"score"`
}

// TestArchiveEqualsFinalBoard archives, on real redis-server and clickhouse-server, a finished
// day of a 2-shard score board of 25,000 members (more than a read chunk per shard: ties on
// score and on reach time, the range's extremes) with its scope board eu, and a finished day
// of the steps board with its region eu: the archive equals each final board rank by rank
// (FINAL and argMax); the day still running is
// not archived, nor the finished one while its processor has not stored its input up to the
// period's end plus the grace; a second run archives nothing (the marks); a run after a lost mark (a crash
// between the rows and the mark) writes the same rows again, which FINAL shows once. On one
// redis-server and on the Redis Cluster (the shards in different slots).
func TestArchiveEqualsFinalBoard(t *testing.T) {
	t.Run("redis", func(t *testing.T) { archiveEqualsFinalBoard(t, testenv.Redis(t)) })
	t.Run("cluster", func(t *testing.T) {
		rdb, _ := testenv.RedisCluster(t)
		archiveEqualsFinalBoard(t, rdb)
	})
}

func archiveEqualsFinalBoard(t *testing.T, rdb goredis.UniversalClient) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	h := e2e.NewHistory(t)
	sink, conn := h.Sink, h.Conn

	b, err := board.NewBoard(board.Spec{Name: "arena", Periods: []string{"d", "total"}, TZ: "Asia/Shanghai", Retention: "3d", Shards: "2"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	running := board.CalendarWindow(board.PeriodDay, now.Add(-archive.DefaultGrace), b.Zone)
	done := board.CalendarWindow(board.PeriodDay, running.Start.Add(-time.Nanosecond), b.Zone)

	// The finished day's board, with its truth; a few members on the running day.
	rng := rand.New(rand.NewPCG(11, 17))
	var truth []rsredis.Ranked
	var writes []rsredis.BoardWrite
	doneRef := rsredis.BoardRef{Board: "arena", Period: board.PeriodDay, PeriodID: done.ID, Shards: b.Shards}
	for i := range 25_000 {
		m := fmt.Sprintf("m%05d", rng.IntN(1_000_000))
		score, reached := int64(rng.IntN(50)-10), done.Start.UnixMilli()+int64(rng.IntN(3))
		switch i {
		case 0:
			score = board.MaxScore
		case 1:
			score = -board.MaxScore
		}
		writes = append(writes, rsredis.BoardWrite{Ref: doneRef, Member: m, Present: true, Score: score, ReachedMs: reached, ExpireAt: done.End.Add(b.Retention)})
	}
	final := map[string]rsredis.Ranked{}
	for _, w := range writes { // the latest write of a member is its entry
		final[w.Member] = rsredis.Ranked{Member: w.Member, Score: w.Score, ReachedMs: w.ReachedMs}
	}
	for _, r := range final {
		truth = append(truth, r)
	}
	slices.SortFunc(truth, func(a, b rsredis.Ranked) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ReachedMs, b.ReachedMs), cmp.Compare(a.Member, b.Member))
	})
	// The members whose id ends in an even digit are also on the scope board eu.
	euRef := doneRef
	euRef.Scope = "eu"
	var truthEU []rsredis.Ranked
	for _, r := range truth {
		if (r.Member[len(r.Member)-1]-'0')%2 == 0 {
			truthEU = append(truthEU, r)
			writes = append(writes, rsredis.BoardWrite{Ref: euRef, Member: r.Member, Present: true, Score: r.Score, ReachedMs: r.ReachedMs, ExpireAt: done.End.Add(b.Retention)})
		}
	}
	runRef := rsredis.BoardRef{Board: "arena", Period: board.PeriodDay, PeriodID: running.ID, Shards: b.Shards}
	writes = append(writes, rsredis.BoardWrite{Ref: runRef, Member: "late", Present: true, Score: 5, ReachedMs: running.Start.UnixMilli(), ExpireAt: running.End.Add(b.Retention)})
	for c := range slices.Chunk(writes, 5000) {
		if err := rsredis.NewBoardWriter(rdb).Write(ctx, c); err != nil {
			t.Fatal(err)
		}
	}

	// A finished steps day: two users tie on steps, the earlier one first.
	day := board.DayOf(now.Add(-72*time.Hour), time.UTC)
	comp := board.DayComposite(day)
	stepsTruth := []rsredis.Ranked{{Member: "u3", Score: 9000, ReachedMs: day.FirstInstant().UnixMilli() + 5},
		{Member: "u1", Score: 800, ReachedMs: day.FirstInstant().UnixMilli() + 1}, {Member: "u2", Score: 800, ReachedMs: day.FirstInstant().UnixMilli() + 2}}
	for _, r := range stepsTruth {
		v, err := comp.Encode(r.Score, r.ReachedMs)
		if err != nil {
			t.Fatal(err)
		}
		if err := rdb.ZAdd(ctx, rsredis.StepsGlobalBoard(day), goredis.Z{Score: v, Member: r.Member}).Err(); err != nil {
			t.Fatal(err)
		}
		if r.Member != "u2" {
			if err := rdb.ZAdd(ctx, rsredis.StepsRegionBoard("eu", day), goredis.Z{Score: v, Member: r.Member}).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	stepsEU := []rsredis.Ranked{stepsTruth[0], stepsTruth[1]}

	a := archive.Archiver{Boards: []*board.Board{b}, StepsRetention: 7 * 24 * time.Hour, Redis: rdb, Store: sink, Log: slog.New(slog.DiscardHandler)}
	// The processors have stored their input up to just before the end plus the grace: the
	// finished day is not due yet (a backlog may still hold ops of it).
	lagging := a
	lagging.ScoresDone = func(context.Context, time.Time) (time.Time, error) {
		return done.End.Add(archive.DefaultGrace - time.Second), nil
	}
	lagging.StepsDone = func(context.Context, time.Time) (time.Time, error) {
		return day.LastInstant().Add(archive.DefaultGrace - time.Second), nil
	}
	if _, err := lagging.Once(ctx, now); err != nil {
		t.Fatal(err)
	}
	for _, bp := range [][2]string{{"arena", "d:" + done.ID}, {"arena", "d:" + done.ID + ":s:eu"}, {"steps", "d:" + day.String()}} {
		var rows uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM board_archive WHERE board = ? AND period = ?", bp[0], bp[1]).Scan(&rows); err != nil || rows != 0 {
			t.Fatalf("%s %s archived (%d rows, %v) before its processor passed its end plus the grace", bp[0], bp[1], rows, err)
		}
	}
	n, err := a.Once(ctx, now)
	if err != nil || n == 0 {
		t.Fatalf("archive: %d boards, %v", n, err)
	}
	check := func(what string) {
		t.Helper()
		for _, c := range []struct {
			board, period string
			truth         []rsredis.Ranked
		}{{"arena", "d:" + done.ID, truth}, {"arena", "d:" + done.ID + ":s:eu", truthEU},
			{"steps", "d:" + day.String(), stepsTruth}, {"steps", "d:" + day.String() + ":s:eu", stepsEU}} {
			for _, q := range []string{
				"SELECT rank, member, score FROM board_archive FINAL WHERE board = ? AND period = ? ORDER BY rank",
				`SELECT rank, argMax(member, archived_at) AS member, argMax(score, archived_at) AS score FROM board_archive
				WHERE board = ? AND period = ? GROUP BY rank ORDER BY rank`,
			} {
				var got []archived
				if err := conn.Select(ctx, &got, q, c.board, c.period); err != nil {
					t.Fatal(err)
				}
				if len(got) != len(c.truth) {
					t.Fatalf("%s: %s %s: %d rows, want %d", what, c.board, c.period, len(got), len(c.truth))
				}
				for i, g := range got {
					w := c.truth[i]
					if g.Rank != uint32(i+1) || g.Member != w.Member || g.Score != w.Score {
						t.Fatalf("%s: %s %s: row %d = %+v, want rank %d %s %d", what, c.board, c.period, i, g, i+1, w.Member, w.Score)
					}
				}
			}
		}
		var live uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM board_archive WHERE board = 'arena' AND period = ?", "d:"+running.ID).Scan(&live); err != nil || live != 0 {
			t.Fatalf("%s: the running day has %d archived rows (%v), want none", what, live, err)
		}
	}
	check("first run")

	if n, err := a.Once(ctx, now.Add(2*time.Second)); err != nil || n != 0 {
		t.Fatalf("second run: archived %d boards (%v), want 0", n, err)
	}
	// A crash between the rows and the mark: the mark is missing, the period archived again.
	if err := rdb.Del(ctx, rsredis.ArchivedKey(rsredis.ScoreBoardKey(doneRef, 0))).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := a.Once(ctx, now.Add(2*time.Second)); err != nil || n != 1 {
		t.Fatalf("run after a lost mark: archived %d boards (%v), want 1", n, err)
	}
	check("after a second archive")
	var raw uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM board_archive WHERE board = 'arena' AND period = ?", "d:"+done.ID).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	t.Logf("arena d:%s: %d members archived twice, %d rows before merges", done.ID, len(truth), raw)
}

// TestProcessedUntil: on the real broker and kfake, the record time up to which a group has
// stored its input is the timestamp of its first uncommitted record, the earliest over the
// partitions (from the first record where it committed nothing), and now once it committed
// everything.
func TestProcessedUntil(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		kc := kafka.Config{Brokers: brokers, Partitions: 2, Names: topics.Names{Prefix: testenv.UniqueName(t, "progress") + "."}}
		cl := e2e.KafkaClient(t, kc)
		topic := string(kc.Names.Stream(topics.ScoresUpdated))
		base := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
		for _, r := range []struct {
			p   int32
			min int
		}{{0, 1}, {0, 2}, {0, 3}, {1, 5}} {
			if err := cl.ProduceSync(ctx, kafka.InPartition(&kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte("{}"), Timestamp: at(r.min)}, r.p)); err != nil {
				t.Fatal(err)
			}
		}
		group := string(kc.Names.Group(scores.Group))
		until := archive.ProcessedUntil(cl, scores.Group, topics.ScoresUpdated)
		now := at(60)
		for _, step := range []struct {
			name   string
			commit map[int32]int64
			want   time.Time
		}{
			{"nothing committed", nil, at(1)},
			{"partition 1 done, partition 0 at its second record", map[int32]int64{0: 1, 1: 1}, at(2)},
			{"everything committed", map[int32]int64{0: 3}, now},
		} {
			if step.commit != nil {
				var offs kadm.Offsets
				for p, o := range step.commit {
					offs.AddOffset(topic, p, o, -1)
				}
				if _, err := cl.Admin().CommitOffsets(ctx, group, offs); err != nil {
					t.Fatal(err)
				}
			}
			got, err := until(ctx, now)
			if err != nil || !got.Equal(step.want) {
				t.Fatalf("%s: processed until %s (%v), want %s", step.name, got, err, step.want)
			}
		}
	})
}

// TestArchiverIsReadyWhileItRuns (defect: the archive unit never told its supervisor it ran, so
// `process --history` never became ready): under a Supervisor, the unit is ready while it runs,
// with ClickHouse down too (its writes retry; readiness is about the unit, not the store).
func TestArchiverIsReadyWhileItRuns(t *testing.T) {
	addr := testenv.FreeAddr(t) // nothing listens: ClickHouse down
	sink, err := rsclickhouse.New(addr, "rankstream")
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	sup := kafka.NewSupervisor(slog.New(slog.DiscardHandler), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- sup.Run(ctx, "archive", archive.Archiver{Redis: testenv.Redis(t), Store: sink, Log: slog.New(slog.DiscardHandler)}.Run)
	}()
	testenv.WaitFor(t, 30*time.Second, "the archive unit to be ready", func() bool { return sup.Ready() == nil })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
