package redis_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// rotating is the size of TestStandingIsAtomicUnderWriters' boards: in generation g, member
// i stands at position (i+g) mod rotating (0 first) with the score rotating - position.
const rotating = 60

func rotatingID(i int) string { return fmt.Sprintf("r%03d", i) }

// rotatingGen checks a standing of member m with n neighbours read from a rotating board: the
// rows must be exactly positions max(0, p-n) .. p+n of one generation, p the member's
// position there, with their members and scores, and total the board's size. It returns that
// generation.
func rotatingGen(total int64, rows []rsredis.Ranked, err error, m, n int) (int, error) {
	if err != nil {
		return 0, err
	}
	i := slices.IndexFunc(rows, func(r rsredis.Ranked) bool { return r.Member == rotatingID(m) })
	if total != rotating || i < 0 {
		return 0, fmt.Errorf("total %d, the member not among the rows %+v", total, rows)
	}
	p := int(rows[i].Rank) - 1
	g := (p - m + rotating) % rotating
	from, to := max(0, p-n), min(rotating-1, p+n)
	if len(rows) != to-from+1 {
		return 0, fmt.Errorf("position %d in generation %d: %d rows, want positions %d..%d: %+v", p, g, len(rows), from, to, rows)
	}
	for k, r := range rows {
		pos := from + k
		want := rsredis.Ranked{Rank: int64(pos + 1), Member: rotatingID((pos - g + rotating) % rotating), Score: int64(rotating - pos), ReachedMs: r.ReachedMs}
		if r != want {
			return 0, fmt.Errorf("position %d in generation %d: row %d is %+v, want %+v (rows %+v)", p, g, k, r, want, rows)
		}
	}
	return g, nil
}

// TestStandingIsAtomicUnderWriters: while a writer rotates every member of a boards by one
// position at a time (one ZADD of all the members of a steps board, one script call for a
// score board of one shard), every standing read through a Reader and a batched Reader is
// one generation's exactly (the member's rank, its neighbours, their scores and the total),
// and none fails; on a score board of 16 shards, whose writes and reads span shards, every
// read succeeds with rows in ranking order. On redis-server, the Redis Cluster and miniredis.
func TestStandingIsAtomicUnderWriters(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb goredis.UniversalClient) {
		ctx := context.Background()
		day := board.Day(20020304) // a day no other test writes, on a shared cluster too
		c := board.DayComposite(day)
		reached := day.FirstInstant().UnixMilli()
		key := rsredis.StepsGlobalBoard(day)
		one, sharded := refOf("atomic1", 1), refOf("atomic16", 16)
		w := rsredis.NewBoardWriter(rdb)
		write := func(g int) error {
			zs := make([]goredis.Z, rotating)
			var w1, w16 []rsredis.BoardWrite
			for i := range rotating {
				score := int64(rotating - (i+g)%rotating)
				v, err := c.Encode(score, reached)
				if err != nil {
					return err
				}
				zs[i] = goredis.Z{Score: v, Member: rotatingID(i)}
				w1 = append(w1, rsredis.BoardWrite{Ref: one, Member: rotatingID(i), Present: true, Score: score, ReachedMs: reached})
				w16 = append(w16, rsredis.BoardWrite{Ref: sharded, Member: rotatingID(i), Present: true, Score: score, ReachedMs: reached})
			}
			if err := rdb.ZAdd(ctx, key, zs...).Err(); err != nil {
				return err
			}
			if err := w.Write(ctx, w1); err != nil {
				return err
			}
			return w.Write(ctx, w16)
		}
		if err := write(0); err != nil {
			t.Fatal(err)
		}

		const generations = 400
		var written atomic.Int64 // the generations written
		writerDone := make(chan struct{})
		go func() {
			defer close(writerDone)
			for g := 1; g <= generations; g++ {
				if err := write(g); err != nil {
					t.Errorf("generation %d: %v", g, err)
					return
				}
				written.Store(int64(g))
			}
		}()
		var mu sync.Mutex
		seen := map[string]map[int]bool{} // generations seen by board
		var wg sync.WaitGroup
		for k := range 8 {
			r := rsredis.NewReader(rdb)
			if k%2 == 1 {
				r = rsredis.NewBatchedReader(rdb)
			}
			wg.Go(func() {
				for j := k; ; j++ {
					select {
					case <-writerDone:
						return
					default:
					}
					m, n := j*7%rotating, j%6
					total, rows, err := r.StepsStanding(ctx, day, "", rotatingID(m), n)
					gs, err := rotatingGen(total, rows, err, m, n)
					if err != nil {
						t.Errorf("steps standing of %s (%d neighbours): %v", rotatingID(m), n, err)
						return
					}
					total, rows, err = r.BoardStanding(ctx, one, rotatingID(m), n)
					g1, err := rotatingGen(total, rows, err, m, n)
					if err != nil {
						t.Errorf("one-shard standing of %s (%d neighbours): %v", rotatingID(m), n, err)
						return
					}
					total, rows, err = r.BoardStanding(ctx, sharded, rotatingID(m), n)
					if err != nil || total != rotating || !slices.ContainsFunc(rows, func(r rsredis.Ranked) bool { return r.Member == rotatingID(m) }) ||
						!slices.IsSortedFunc(rows, func(a, b rsredis.Ranked) int { return int(b.Score - a.Score) }) {
						t.Errorf("16-shard standing of %s (%d neighbours): total %d, %v: %+v", rotatingID(m), n, total, err, rows)
						return
					}
					mu.Lock()
					for b, g := range map[string]int{"steps": gs, "one": g1} {
						if seen[b] == nil {
							seen[b] = map[int]bool{}
						}
						seen[b][g] = true
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		<-writerDone
		// The reads ran while the boards changed (else the test proves nothing).
		for _, b := range []string{"steps", "one"} {
			if len(seen[b]) < 10 {
				t.Errorf("%s board: the reads saw %d generations of the %d written", b, len(seen[b]), written.Load())
			}
		}
		t.Logf("generations seen: steps %d, one shard %d (of %d)", len(seen["steps"]), len(seen["one"]), written.Load())
	})
}

// TestStepsStandingKeepsEveryBitOfTheScore: a standing's rows carry the composite scores
// exactly, on values where any rounding shows: the largest composites (53 significant bits,
// 16 decimal digits, which Lua's tostring would cut to 14) and neighbours a unit apart.
func TestStepsStandingKeepsEveryBitOfTheScore(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb goredis.UniversalClient) {
		ctx := context.Background()
		day := board.Day(20020305)
		c := board.DayComposite(day)
		first, last := day.FirstInstant().UnixMilli(), day.LastInstant().UnixMilli()-1
		type written struct {
			member string
			v      float64
		}
		var all []written // in rank order
		for i := range int64(8) {
			for _, sr := range [][2]int64{{c.MaxScore(), first + i}, {c.MaxScore() - 1 - i, last - i}} {
				v, err := c.Encode(sr[0], sr[1])
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, written{fmt.Sprintf("b%02d", len(all)), v})
			}
		}
		slices.SortFunc(all, func(a, b written) int { return int(b.v - a.v) })
		if top := all[0].v; top != math.Exp2(53)-1 || all[1].v != top-1 {
			t.Fatalf("the values do not reach 2^53-1 a unit apart: %v %v", top, all[1].v)
		}
		var zs []goredis.Z
		for _, w := range all {
			zs = append(zs, goredis.Z{Score: w.v, Member: w.member})
		}
		if err := rdb.ZAdd(ctx, rsredis.StepsGlobalBoard(day), zs...).Err(); err != nil {
			t.Fatal(err)
		}
		for _, r := range []*rsredis.Reader{rsredis.NewReader(rdb), rsredis.NewBatchedReader(rdb)} {
			for i, w := range all {
				total, rows, err := r.StepsStanding(ctx, day, "", w.member, 3)
				if err != nil || total != int64(len(all)) {
					t.Fatalf("standing of %s: %d, %v", w.member, total, err)
				}
				from := max(0, i-3)
				for k, row := range rows {
					want := all[from+k]
					if v, err := c.Encode(row.Score, row.ReachedMs); err != nil || row.Member != want.member || row.Rank != int64(from+k+1) || v != want.v {
						t.Fatalf("standing of %s: row %+v (composite %v, %v), want %s at rank %d with composite %v", w.member, row, v, err, want.member, from+k+1, want.v)
					}
				}
			}
		}
	})
}

// TestStandingReloadsLostScript: a Redis that lost its script cache (a restart, SCRIPT
// FLUSH) gets the standing script again, through a Reader and a batched Reader.
func TestStandingReloadsLostScript(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	day := board.Day(20020306)
	if err := rdb.ZAdd(ctx, rsredis.StepsGlobalBoard(day), goredis.Z{Score: 1, Member: "a"}).Err(); err != nil {
		t.Fatal(err)
	}
	ref := refOf("reload", 1)
	if err := rsredis.NewBoardWriter(rdb).Write(ctx, []rsredis.BoardWrite{{Ref: ref, Member: "a", Present: true, Score: 3}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*rsredis.Reader{rsredis.NewReader(rdb), rsredis.NewBatchedReader(rdb)} {
		for range 2 {
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if total, rows, err := r.StepsStanding(ctx, day, "", "a", 1); err != nil || total != 1 || len(rows) != 1 {
				t.Fatalf("steps standing after SCRIPT FLUSH: %d %+v %v", total, rows, err)
			}
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
			if total, rows, err := r.BoardStanding(ctx, ref, "a", 1); err != nil || total != 1 || len(rows) != 1 || rows[0].Score != 3 {
				t.Fatalf("score board standing after SCRIPT FLUSH: %d %+v %v", total, rows, err)
			}
		}
	}
}
