package redis_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// TestShardedBoardOf200kMembers is the acceptance test of sharded score boards: a 16-shard and a 1-shard
// board of the same 200,000 members (scores crowded into 2,000 values and 3 reach times, so
// that ties cross shards, and the range's extremes) answer identical pages and ranks, equal to
// the test's own ranking: the whole board in rank order (ScanBoard, chunked), pages at
// offsets 0..20, 990..1000 and 40 others with limits 1, 100 and one at random, and the
// standing (0, 5 and 50 neighbours) of the first and last 150 members and of 400 at random.
// The boards are loaded directly (ZADD and HSET of the writer's entries, pipelined); on one
// redis-server and on the Redis Cluster.
func TestShardedBoardOf200kMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 400k entries")
	}
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		start := time.Now()
		r := rsredis.NewReader(rdb)
		one, sharded := refOf("big1", 1), refOf("big16", 16)
		const n = 200_000
		rng := rand.New(rand.NewPCG(200, 16))
		want := make([]scored, n)
		for i := range want {
			s := scored{fmt.Sprintf("u%07d", rng.IntN(1<<30)), rng.Int64N(2000) - 100, 1_796_000_000_000 + rng.Int64N(3)}
			switch i {
			case 0, 1:
				s.score = board.MaxScore
			case 2, 3:
				s.score = -board.MaxScore
			}
			s.member = fmt.Sprintf("%s-%d", s.member, i) // distinct ids
			want[i] = s
		}
		load(t, ctx, rdb, one, want)
		load(t, ctx, rdb, sharded, want)
		slices.SortFunc(want, ranks)
		loaded := time.Since(start)
		row := func(i int) rsredis.Ranked {
			return rsredis.Ranked{Rank: int64(i + 1), Member: want[i].member, Score: want[i].score, ReachedMs: want[i].reached}
		}
		rows := func(from, to int) []rsredis.Ranked {
			var out []rsredis.Ranked
			for i := max(from, 0); i < min(to, n); i++ {
				out = append(out, row(i))
			}
			return out
		}
		refs := []rsredis.BoardRef{one, sharded}
		for _, ref := range refs {
			var got []rsredis.Ranked
			if err := r.ScanBoard(ctx, ref, 10_000, func(rs []rsredis.Ranked) error { got = append(got, rs...); return nil }); err != nil {
				t.Fatal(err)
			}
			if len(got) != n {
				t.Fatalf("%d shards: scan read %d members, want %d", ref.Shards, len(got), n)
			}
			for i := range got {
				if got[i] != row(i) {
					t.Fatalf("%d shards: scan row %d = %+v, want %+v", ref.Shards, i, got[i], row(i))
				}
			}
		}
		offsets := []int{}
		for o := range 21 {
			offsets = append(offsets, o, rsredis.MaxBoardOffset-o%11)
		}
		for range 40 {
			offsets = append(offsets, rng.IntN(rsredis.MaxBoardOffset+1))
		}
		for _, o := range offsets {
			for _, limit := range []int{1, rsredis.MaxBoardLimit, 1 + rng.IntN(rsredis.MaxBoardLimit)} {
				for _, ref := range refs {
					total, got, err := r.BoardPage(ctx, ref, o, limit)
					if err != nil || total != n || !slices.Equal(got, rows(o, o+limit)) {
						t.Fatalf("%d shards, page offset %d limit %d: total %d, %v\n got %+v\nwant %+v", ref.Shards, o, limit, total, err, got, rows(o, o+limit))
					}
				}
			}
		}
		var sample []int
		for i := range 150 {
			sample = append(sample, i, n-1-i)
		}
		for range 400 {
			sample = append(sample, rng.IntN(n))
		}
		for k, i := range sample {
			nb := []int{0, 5, rsredis.MaxBoardNeighbors}[k%3]
			for _, ref := range refs {
				total, got, err := r.BoardStanding(ctx, ref, want[i].member, nb)
				if exp := rows(i-nb, i+nb+1); err != nil || total != n || !slices.Equal(got, exp) {
					t.Fatalf("%d shards, standing of %s (rank %d, %d neighbours): %v\n got %+v\nwant %+v", ref.Shards, want[i].member, i+1, nb, err, got, exp)
				}
			}
		}
		t.Logf("%d members on 1 and 16 shards: loaded in %s, checked in %s", n, loaded.Round(time.Millisecond), (time.Since(start) - loaded).Round(time.Millisecond))
	})
}

// load writes members to ref's shards directly, as the board writer would (the entry in the
// sorted set, its 13-byte prefix in the hash), in pipelines of ZADD and HSET of 1,000 members.
func load(t *testing.T, ctx context.Context, rdb goredis.UniversalClient, ref rsredis.BoardRef, members []scored) {
	t.Helper()
	type shardBatch struct {
		z []goredis.Z
		h []any
	}
	batches := make([]shardBatch, ref.Shards)
	pipe := rdb.Pipeline()
	flush := func(i int) {
		b := &batches[i]
		pipe.ZAdd(ctx, rsredis.ScoreBoardKey(ref, i), b.z...)
		pipe.HSet(ctx, rsredis.ScoreBoardMembersKey(ref, i), b.h...)
		b.z, b.h = b.z[:0], b.h[:0]
		if pipe.Len() >= 64 {
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, m := range members {
		e, err := rsredis.EncodeEntry(m.member, m.score, m.reached)
		if err != nil {
			t.Fatal(err)
		}
		i := rsredis.ShardOf(m.member, ref.Shards)
		b := &batches[i]
		b.z = append(b.z, goredis.Z{Member: e})
		b.h = append(b.h, m.member, e[:len(e)-len(m.member)])
		if len(b.z) == 1000 {
			flush(i)
		}
	}
	for i := range batches {
		if len(batches[i].z) > 0 {
			flush(i)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestScanBoardChunks: ScanBoard reads a board whole, in rank order, in calls of at most chunk
// rows, whatever the chunk (1 upward) and with shards empty or not; an empty board calls fn
// never. On one redis-server and on the Redis Cluster.
func TestScanBoardChunks(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		ctx := context.Background()
		r := rsredis.NewReader(rdb)
		rng := rand.New(rand.NewPCG(5, 8))
		for _, tc := range []struct {
			shards, members int
		}{{1, 0}, {5, 0}, {8, 3}, {5, 37}, {1, 37}} {
			ref := refOf(fmt.Sprintf("scan-%d-%d", tc.shards, tc.members), tc.shards)
			var want []scored
			for i := range tc.members {
				want = append(want, scored{fmt.Sprintf("m%d", i), rng.Int64N(4), 1_796_000_000_000 + rng.Int64N(2)})
			}
			if len(want) > 0 {
				load(t, ctx, rdb, ref, want)
			}
			slices.SortFunc(want, ranks)
			for _, chunk := range []int{1, 2, 7, 100} {
				var got []rsredis.Ranked
				err := r.ScanBoard(ctx, ref, chunk, func(rs []rsredis.Ranked) error {
					if len(rs) == 0 || len(rs) > chunk {
						t.Fatalf("%d shards, chunk %d: a call with %d rows", tc.shards, chunk, len(rs))
					}
					got = append(got, rs...)
					return nil
				})
				if err != nil || len(got) != len(want) {
					t.Fatalf("%d shards, %d members, chunk %d: %d rows, %v", tc.shards, tc.members, chunk, len(got), err)
				}
				for i, g := range got {
					if w := (rsredis.Ranked{Rank: int64(i + 1), Member: want[i].member, Score: want[i].score, ReachedMs: want[i].reached}); g != w {
						t.Fatalf("%d shards, chunk %d: row %d = %+v, want %+v", tc.shards, chunk, i, g, w)
					}
				}
			}
		}
	})
}
