package redis_test

import (
	"context"
	"fmt"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// BenchmarkFriendsRead measures the reads of a 5,000-friend board on the real redis-server,
// one after another: SMEMBERS friends:{user}, then every friend's value that day (pipelined
// ZMSCORE batches), as the read API does before ranking.
func BenchmarkFriendsRead(b *testing.B) {
	rdb := testenv.Redis(b)
	ctx := context.Background()
	day := board.Day(20261130)
	c := board.DayComposite(day)
	var zs []goredis.Z
	var fs []any
	for i := range 5_000 {
		f := fmt.Sprintf("friend-%04d", i)
		score, _ := c.Encode(int64(i), day.FirstInstant().UnixMilli()+int64(i))
		zs = append(zs, goredis.Z{Score: score, Member: f})
		fs = append(fs, f)
	}
	if err := rdb.ZAdd(ctx, rsredis.StepsGlobalBoard(day), zs...).Err(); err != nil {
		b.Fatal(err)
	}
	if err := rdb.SAdd(ctx, rsredis.FriendsKey("viewer"), fs...).Err(); err != nil {
		b.Fatal(err)
	}
	r := rsredis.NewReader(rdb)
	b.ReportAllocs()
	for b.Loop() {
		friends, err := r.Friends(ctx, "viewer")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.StepsStandings(ctx, day, friends); err != nil {
			b.Fatal(err)
		}
	}
}
