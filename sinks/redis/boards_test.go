package redis_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

type scored struct {
	member         string
	score, reached int64
}

// ranks sorts like a board: higher score, then earlier reach, then smaller member id (bytes).
func ranks(a, b scored) int {
	return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.reached, b.reached), strings.Compare(a.member, b.member))
}

// TestEntryOrderIsTheRanking: byte order of encoded entries is the ranking, exactly, over the
// whole range of scores and reach times, and entries decode to what was encoded.
func TestEntryOrderIsTheRanking(t *testing.T) {
	const m = board.MaxScore
	rng := rand.New(rand.NewPCG(4, 7))
	scores := []int64{-m, -m + 1, -1, 0, 1, m - 1, m, 1 << 46, -(1 << 46), 255, 256, 65535, 65536}
	reached := []int64{0, 1, 255, 256, 1<<48 - 1, 1<<48 - 2, 1_796_000_000_000, 1_796_000_000_001}
	members := []string{"a", "b", "aa", "", "\x00", "\xff", "z\x00", "user-17"}
	var all []scored
	for range 3000 {
		s := scored{members[rng.IntN(len(members))], scores[rng.IntN(len(scores))], reached[rng.IntN(len(reached))]}
		if rng.IntN(2) == 0 {
			s.score = rng.Int64N(2*m+1) - m
		}
		if rng.IntN(2) == 0 {
			s.reached = rng.Int64N(1 << 48)
		}
		all = append(all, s)
	}
	enc := func(s scored) string {
		e, err := rsredis.EncodeEntry(s.member, s.score, s.reached)
		if err != nil {
			t.Fatalf("EncodeEntry(%+v): %v", s, err)
		}
		if mb, sc, r, err := rsredis.DecodeEntry(e); err != nil || mb != s.member || sc != s.score || r != s.reached {
			t.Fatalf("DecodeEntry(EncodeEntry(%+v)) = %q %d %d %v", s, mb, sc, r, err)
		}
		return e
	}
	for i := range all {
		for j := range 20 {
			a, b := all[i], all[(i*7+j*13)%len(all)]
			if got, want := cmp.Compare(enc(a), enc(b)), ranks(a, b); got != want {
				t.Fatalf("%+v vs %+v: bytes compare %d, ranking %d", a, b, got, want)
			}
		}
	}
	for _, bad := range []scored{{"x", m + 1, 0}, {"x", -m - 1, 0}, {"x", 0, -1}, {"x", 0, 1 << 48}} {
		if _, err := rsredis.EncodeEntry(bad.member, bad.score, bad.reached); !errors.Is(err, rsredis.ErrEntryRange) {
			t.Errorf("EncodeEntry(%+v): %v, want ErrEntryRange", bad, err)
		}
	}
}

// TestScoreBoardKeysSpreadOverACluster: a shard's sorted set and hash share a slot (one
// script writes both); the 16 shards of a board take different slots, spread over the three
// masters of an evenly split cluster.
func TestScoreBoardKeysSpreadOverACluster(t *testing.T) {
	if rsredis.KeySlot("123456789") != 0x31C3 {
		t.Fatal("crc16 of the test is wrong")
	}
	ref := rsredis.BoardRef{Board: "arena", Period: board.PeriodDay, PeriodID: "20261130", Scope: "eu", Shards: 16}
	if k := rsredis.ScoreBoardKey(ref, 3); k != "rank:{arena:d:20261130:s:eu:3}" {
		t.Fatalf("key %s", k)
	}
	if k := rsredis.ScoreBoardKey(rsredis.BoardRef{Board: "arena", Period: board.PeriodTotal, PeriodID: "total", Shards: 1}, 0); k != "rank:{arena:total:0}" {
		t.Fatalf("key %s", k)
	}
	slots, masters := map[int]bool{}, map[int]bool{}
	for i := range ref.Shards {
		z, h := rsredis.ScoreBoardKey(ref, i), rsredis.ScoreBoardMembersKey(ref, i)
		if rsredis.KeySlot(z) != rsredis.KeySlot(h) {
			t.Fatalf("%s and %s in slots %d and %d", z, h, rsredis.KeySlot(z), rsredis.KeySlot(h))
		}
		slots[rsredis.KeySlot(z)] = true
		masters[rsredis.KeySlot(z)*3/16384] = true
	}
	if len(slots) != ref.Shards || len(masters) != 3 {
		t.Fatalf("16 shards in %d slots on %d of 3 masters", len(slots), len(masters))
	}
}

func refOf(name string, shards int) rsredis.BoardRef {
	return rsredis.BoardRef{Board: name, Period: board.PeriodTotal, Shards: shards}
}

func TestBoardWriterAndReader(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		ctx := context.Background()
		w, r := rsredis.NewBoardWriter(rdb), rsredis.NewReader(rdb)
		ref := rsredis.BoardRef{Board: "arena", Period: board.PeriodDay, PeriodID: "20261130", Shards: 4}
		exp := time.Now().Add(time.Hour).Truncate(time.Second)
		const m = board.MaxScore
		writes := []rsredis.BoardWrite{
			{Ref: ref, Member: "a", Present: true, Score: 10, ReachedMs: 5, ExpireAt: exp},
			{Ref: ref, Member: "b", Present: true, Score: 10, ReachedMs: 4, ExpireAt: exp},
			{Ref: ref, Member: "c", Present: true, Score: m, ReachedMs: 9, ExpireAt: exp},
			{Ref: ref, Member: "d", Present: true, Score: -m, ReachedMs: 0, ExpireAt: exp},
			{Ref: ref, Member: "e", Present: true, Score: 10, ReachedMs: 4, ExpireAt: exp},
			{Ref: ref, Member: "a", Present: true, Score: 11, ReachedMs: 7, ExpireAt: exp}, // a moves up
			{Ref: ref, Member: "f", Present: true, Score: 1, ReachedMs: 1, ExpireAt: exp},
			{Ref: ref, Member: "f", ExpireAt: exp}, // f leaves
			{Ref: ref, Member: "zz"},               // absent: nothing to remove
		}
		for range 2 { // writing the batch again changes nothing
			if err := w.Write(ctx, writes); err != nil {
				t.Fatal(err)
			}
		}
		total, rows, err := r.BoardPage(ctx, ref, 0, 10)
		want := []rsredis.Ranked{{Rank: 1, Member: "c", Score: m, ReachedMs: 9}, {Rank: 2, Member: "a", Score: 11, ReachedMs: 7},
			{Rank: 3, Member: "b", Score: 10, ReachedMs: 4}, {Rank: 4, Member: "e", Score: 10, ReachedMs: 4}, {Rank: 5, Member: "d", Score: -m, ReachedMs: 0}}
		if err != nil || total != 5 || !slices.Equal(rows, want) {
			t.Fatalf("page: %d %+v %v, want 5 %+v", total, rows, err, want)
		}
		if _, rows, _ := r.BoardPage(ctx, ref, 3, 10); !slices.Equal(rows, want[3:]) {
			t.Fatalf("page at offset 3: %+v", rows)
		}
		total, rows, err = r.BoardStanding(ctx, ref, "b", 1)
		if err != nil || total != 5 || !slices.Equal(rows, want[1:4]) {
			t.Fatalf("standing of b: %d %+v %v", total, rows, err)
		}
		if _, _, err := r.BoardStanding(ctx, ref, "f", 1); !errors.Is(err, rsredis.ErrNotRanked) {
			t.Fatalf("standing of a removed member: %v", err)
		}
		// Every key of the board expires with the period; total boards never do.
		used := map[int]bool{}
		for _, m := range []string{"a", "b", "c", "d", "e"} {
			used[rsredis.ShardOf(m, ref.Shards)] = true
		}
		keys := allKeys(t, ctx, rdb, "rank:*")
		if len(keys) != 2*len(used) {
			t.Fatalf("keys %q, want a sorted set and a hash for each of the %d shards used", keys, len(used))
		}
		for _, k := range keys {
			if at, _ := rdb.ExpireTime(ctx, k).Result(); at != time.Duration(exp.Unix())*time.Second {
				t.Fatalf("%s expires at %v, want %v", k, at, exp.Unix())
			}
		}
		if err := w.Write(ctx, []rsredis.BoardWrite{{Ref: refOf("forever", 1), Member: "a", Present: true}}); err != nil {
			t.Fatal(err)
		}
		if ttl, _ := rdb.TTL(ctx, rsredis.ScoreBoardKey(refOf("forever", 1), 0)).Result(); ttl != -1 {
			t.Fatalf("a total board has TTL %v", ttl)
		}
		// Bad input is refused before anything is written.
		bad := []rsredis.BoardWrite{{Ref: refOf("bad", 1), Member: "a", Present: true}, {Ref: refOf("bad", 1), Member: "b", Present: true, Score: m + 1}}
		if err := w.Write(ctx, bad); !errors.Is(err, rsredis.ErrEntryRange) {
			t.Fatalf("score out of range: %v", err)
		}
		if n, _ := rdb.Exists(ctx, rsredis.ScoreBoardKey(refOf("bad", 1), 0)).Result(); n != 0 {
			t.Fatal("a refused batch wrote a part")
		}
		for _, c := range []struct{ offset, limit, n int }{{1001, 1, 0}, {0, 101, 0}, {-1, 1, 0}} {
			if _, _, err := r.BoardPage(ctx, ref, c.offset, c.limit); !errors.Is(err, rsredis.ErrBoardBounds) {
				t.Errorf("page %+v: %v", c, err)
			}
		}
		if _, _, err := r.BoardStanding(ctx, ref, "a", 51); !errors.Is(err, rsredis.ErrBoardBounds) {
			t.Errorf("51 neighbours: %v", err)
		}
	})
}

// TestBoardWriterReloadsLostScripts: a Redis that lost its script cache (a restart, SCRIPT
// FLUSH) gets the scripts again.
func TestBoardWriterReloadsLostScripts(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	w := rsredis.NewBoardWriter(rdb)
	for i := range 2 {
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(ctx, []rsredis.BoardWrite{{Ref: refOf("s", 1), Member: fmt.Sprint(i), Present: true}, {Ref: refOf("s", 1), Member: "x"}}); err != nil {
			t.Fatalf("write %d after SCRIPT FLUSH: %v", i, err)
		}
	}
	if n, _ := rdb.ZCard(ctx, rsredis.ScoreBoardKey(refOf("s", 1), 0)).Result(); n != 2 {
		t.Fatalf("%d entries", n)
	}
}

// TestShardedBoardAnswersLikeOneShard: a board of 16 shards and the same board of one shard,
// written with the same few thousand writes (ties of score and reach time, the range's
// extremes, updates and removals), answer every page offset 0..1000 and every limit 1..100
// (each offset with one limit, cycling through them, and every limit at the first, the last
// and a middle offset) and every member's rank and neighbours (0..50, cycling) exactly alike,
// and both equal the ranking the test computes itself.
func TestShardedBoardAnswersLikeOneShard(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		ctx := context.Background()
		w, r := rsredis.NewBoardWriter(rdb), rsredis.NewReader(rdb)
		one, sharded := refOf("one", 1), refOf("sharded", 16)
		rng := rand.New(rand.NewPCG(16, 1))
		const members = 3000
		truth := map[string]scored{}
		var batch1, batch16 []rsredis.BoardWrite
		flush := func() {
			for _, b := range [][]rsredis.BoardWrite{batch1, batch16} {
				if err := w.Write(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			batch1, batch16 = batch1[:0], batch16[:0]
		}
		for i := range 5 * members {
			id := fmt.Sprintf("m%d", rng.IntN(members))
			s := scored{id, rng.Int64N(40), 1_796_000_000_000 + rng.Int64N(5)}
			switch rng.IntN(20) {
			case 0:
				s.score = board.MaxScore
			case 1:
				s.score = -board.MaxScore
			case 2:
				s.score = rng.Int64N(2*board.MaxScore+1) - board.MaxScore
			}
			present := rng.IntN(10) != 0
			if present {
				truth[id] = s
			} else {
				delete(truth, id)
			}
			for _, ref := range []rsredis.BoardRef{one, sharded} {
				x := rsredis.BoardWrite{Ref: ref, Member: id, Present: present, Score: s.score, ReachedMs: s.reached}
				if ref.Shards == 1 {
					batch1 = append(batch1, x)
				} else {
					batch16 = append(batch16, x)
				}
			}
			if i%500 == 499 {
				flush()
			}
		}
		flush()
		want := make([]scored, 0, len(truth))
		for _, s := range truth {
			want = append(want, s)
		}
		slices.SortFunc(want, ranks)
		row := func(i int) rsredis.Ranked {
			return rsredis.Ranked{Rank: int64(i + 1), Member: want[i].member, Score: want[i].score, ReachedMs: want[i].reached}
		}
		rows := func(from, to int) []rsredis.Ranked {
			var out []rsredis.Ranked
			for i := from; i < min(to, len(want)); i++ {
				out = append(out, row(i))
			}
			return out
		}
		shardsUsed := 0
		for i := range 16 {
			if n, _ := rdb.ZCard(ctx, rsredis.ScoreBoardKey(sharded, i)).Result(); n > 0 {
				shardsUsed++
			}
		}
		if shardsUsed != 16 || len(want) < 2000 {
			t.Fatalf("%d shards used, %d members", shardsUsed, len(want))
		}
		t.Logf("%d members on the board", len(want))
		check := func(offset, limit int) {
			t.Helper()
			for _, ref := range []rsredis.BoardRef{one, sharded} {
				total, got, err := r.BoardPage(ctx, ref, offset, limit)
				if err != nil || total != int64(len(want)) || !slices.Equal(got, rows(offset, offset+limit)) {
					t.Fatalf("%d shards, page offset %d limit %d: total %d, %v\n got %+v\nwant %+v", ref.Shards, offset, limit, total, err, got, rows(offset, offset+limit))
				}
			}
		}
		for offset := 0; offset <= rsredis.MaxBoardOffset; offset++ {
			check(offset, 1+offset%rsredis.MaxBoardLimit)
		}
		for _, offset := range []int{0, 517, rsredis.MaxBoardOffset} {
			for limit := 1; limit <= rsredis.MaxBoardLimit; limit++ {
				check(offset, limit)
			}
		}
		for i := range want {
			n := i % (rsredis.MaxBoardNeighbors + 1)
			for _, ref := range []rsredis.BoardRef{one, sharded} {
				total, got, err := r.BoardStanding(ctx, ref, want[i].member, n)
				if exp := rows(max(0, i-n), i+n+1); err != nil || total != int64(len(want)) || !slices.Equal(got, exp) {
					t.Fatalf("%d shards, standing of %s (rank %d, %d neighbours): %v\n got %+v\nwant %+v", ref.Shards, want[i].member, i+1, n, err, got, exp)
				}
			}
		}
		for id := range members {
			if _, ok := truth[fmt.Sprintf("m%d", id)]; ok {
				continue
			}
			for _, ref := range []rsredis.BoardRef{one, sharded} {
				if _, _, err := r.BoardStanding(ctx, ref, fmt.Sprintf("m%d", id), 3); !errors.Is(err, rsredis.ErrNotRanked) {
					t.Fatalf("%d shards, a removed member: %v", ref.Shards, err)
				}
			}
		}

		// serve's batched Reader gives the same answers while 16 readers share round trips
		// (the 16-shard reads, of more than maxBatchedCmds commands, have their own), a
		// removed member's ErrNotRanked (a nil reply among the others' rows) included.
		br := rsredis.NewBatchedReader(rdb)
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				for id := g; id < members; id += 16 {
					m := fmt.Sprintf("m%d", id)
					i, ranked := slices.IndexFunc(want, func(s scored) bool { return s.member == m }), truth[m] != scored{}
					for _, ref := range []rsredis.BoardRef{one, sharded} {
						total, got, err := br.BoardStanding(ctx, ref, m, 2)
						if !ranked {
							if !errors.Is(err, rsredis.ErrNotRanked) {
								t.Errorf("batched, %d shards, a removed member: %v", ref.Shards, err)
								return
							}
							continue
						}
						if exp := rows(max(0, i-2), i+3); err != nil || total != int64(len(want)) || !slices.Equal(got, exp) {
							t.Errorf("batched, %d shards, standing of %s: %v\n got %+v\nwant %+v", ref.Shards, m, err, got, exp)
							return
						}
						offset := id % rsredis.MaxBoardOffset
						if total, got, err := br.BoardPage(ctx, ref, offset, 10); err != nil || total != int64(len(want)) || !slices.Equal(got, rows(offset, offset+10)) {
							t.Errorf("batched, %d shards, page offset %d: %v\n got %+v\nwant %+v", ref.Shards, offset, err, got, rows(offset, offset+10))
							return
						}
					}
				}
			})
		}
		wg.Wait()
	})
}

// TestScoreBoardMemoryPerMember measures the Redis memory of a one-shard total board of
// 100,000 members (sorted set + hash, MEMORY USAGE with all samples) and reports the bytes
// per member; it fails if the cost leaves the documented bound.
func TestScoreBoardMemoryPerMember(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100k members")
	}
	rdb := testenv.Redis(t)
	ctx := context.Background()
	w := rsredis.NewBoardWriter(rdb)
	ref := refOf("mem", 1)
	const n = 100_000
	batch := make([]rsredis.BoardWrite, 0, 5000)
	for i := range n {
		batch = append(batch, rsredis.BoardWrite{Ref: ref, Member: fmt.Sprintf("user-%07d", i), Present: true, Score: int64(i * 7919 % 1_000_000), ReachedMs: 1_796_000_000_000 + int64(i)})
		if len(batch) == cap(batch) {
			if err := w.Write(ctx, batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	var total int64
	for _, k := range []string{rsredis.ScoreBoardKey(ref, 0), rsredis.ScoreBoardMembersKey(ref, 0)} {
		v, err := rdb.Do(ctx, "MEMORY", "USAGE", k, "SAMPLES", "0").Int64()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("MEMORY USAGE %s SAMPLES 0 = %d bytes (%.1f per member)", k, v, float64(v)/n)
		total += v
	}
	per := float64(total) / n
	t.Logf("score board of %d members with 12-byte ids: %.1f bytes per member", n, per)
	if per > 240 {
		t.Fatalf("%.1f bytes per member: above the bound of 240 documented in docs/scores.md", per)
	}
}
