package redis_test

import (
	"context"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// TestFriendsWriterMirrorsPairs: friends:{user} gets the pairs a user has and loses those it
// no longer has; the latest update of a pair in a batch wins; a nil update writes nothing and
// is acknowledged; acks come in submission order once Redis acknowledged.
func TestFriendsWriterMirrorsPairs(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		ctx := context.Background()
		u, v := testenv.UniqueName(t, "fu"), testenv.UniqueName(t, "fv")
		w := rsredis.NewFriendsWriter(rdb, rsredis.FlushOptions{Logger: quiet})
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- w.Run(runCtx) }()
		defer func() { cancel(); <-done }()
		acks := make(chan int, 16)
		submit := func(i int, up *board.FriendUpdate) {
			w.Submit(up, func(err error) {
				if err != nil {
					t.Errorf("ack %d: %v", i, err)
				}
				acks <- i
			})
		}
		submit(0, &board.FriendUpdate{User: u, Friend: "a", Friends: true})
		submit(1, &board.FriendUpdate{User: u, Friend: "b", Friends: true})
		submit(2, nil)
		submit(3, &board.FriendUpdate{User: u, Friend: "b", Friends: false})
		submit(4, &board.FriendUpdate{User: v, Friend: "c", Friends: true})
		for i := range 5 {
			select {
			case got := <-acks:
				if got != i {
					t.Fatalf("ack %d came as number %d", got, i)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("no ack")
			}
		}
		r := rsredis.NewReader(rdb)
		for user, want := range map[string][]string{u: {"a"}, v: {"c"}} {
			got, err := r.Friends(ctx, user)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Sort(got); !slices.Equal(got, want) {
				t.Fatalf("friends of %s: %v, want %v", user, got, want)
			}
		}
	})
}

// TestFriendsStandingsReadBothKindsOfBoards: StepsStandings and BoardStandings return each
// member's value (present or not), exactly, over more members than one command takes, on a
// sharded score board too.
func TestFriendsStandingsReadBothKindsOfBoards(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		ctx := context.Background()
		r := rsredis.NewReader(rdb)
		day := board.Day(20010203) // a day no other test writes, on a shared cluster too
		c := board.DayComposite(day)
		prefix := testenv.UniqueName(t, "m")
		var members []string
		var zs []goredis.Z
		var writes []rsredis.BoardWrite
		ref := rsredis.BoardRef{Board: prefix[:min(len(prefix), 40)], Period: board.PeriodTotal, Shards: 3}
		reached := day.FirstInstant().Add(20 * time.Hour).UnixMilli()
		for i := range 2_500 {
			m := prefix + "-" + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
			members = append(members, m)
			if i%3 == 0 {
				continue // no value
			}
			score, _ := c.Encode(int64(i), reached+int64(i))
			zs = append(zs, goredis.Z{Score: score, Member: m})
			writes = append(writes, rsredis.BoardWrite{Ref: ref, Member: m, Present: true, Score: int64(-i), ReachedMs: reached + int64(i)})
		}
		if err := rdb.ZAdd(ctx, rsredis.StepsGlobalBoard(day), zs...).Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rdb.Del(context.Background(), rsredis.StepsGlobalBoard(day)) })
		if err := rsredis.NewBoardWriter(rdb).Write(ctx, writes); err != nil {
			t.Fatal(err)
		}
		steps, err := r.StepsStandings(ctx, day, members)
		if err != nil {
			t.Fatal(err)
		}
		scores, err := r.BoardStandings(ctx, ref, members)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range members {
			want := board.Standing{Member: m}
			if i%3 != 0 {
				want.Present, want.Score, want.ReachedMs = true, int64(i), reached+int64(i)
			}
			if steps[i] != want {
				t.Fatalf("steps of %s: %+v, want %+v", m, steps[i], want)
			}
			want.Score = -want.Score
			if scores[i] != want {
				t.Fatalf("board entry of %s: %+v, want %+v", m, scores[i], want)
			}
		}
	})
}
