package redis_test

import (
	"context"
	"maps"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// TestStepsDayReadsWhatTheWriterWrote: StepsDay reads back every step key and board of one
// day the steps writer wrote (and nothing of the next day), and RemoveSteps deletes exactly
// the keys and members named. On one redis-server and on the Redis Cluster (keys on every
// master).
func TestStepsDayReadsWhatTheWriterWrote(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		ctx := context.Background()
		w := runWriter(t, rdb, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Interval: 20 * time.Millisecond}})
		day := board.Day(20261130)
		base := day.FirstInstant().UnixMilli() + 3_600_000
		regions := []string{"", "eu", "us", "asia"}
		want := rsredis.StepsDay{Values: map[string]int64{}, Boards: map[string]map[string]float64{"": {}}}
		var a acks
		n := 0
		for i := range 300 {
			u := &board.StepUpdate{User: "user-" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Day: day, Steps: int64(100 + i), ReachedMs: base + int64(i), Region: regions[i%4]}
			w.Submit(u, a.done(n))
			n++
			score, err := board.DayComposite(day).Encode(u.Steps, u.ReachedMs)
			if err != nil {
				t.Fatal(err)
			}
			want.Values[u.User] = u.Steps
			want.Boards[""][u.User] = score
			if u.Region != "" {
				if want.Boards[u.Region] == nil {
					want.Boards[u.Region] = map[string]float64{}
				}
				want.Boards[u.Region][u.User] = score
			}
		}
		w.Submit(&board.StepUpdate{User: "next-day", Day: day + 1, Steps: 5, ReachedMs: base + 86_400_000, Region: "eu"}, a.done(n))
		waitAcks(t, &a, n+1)
		r := rsredis.NewReader(rdb)
		got, err := r.StepsDay(ctx, day)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got.Values, want.Values) || !maps.EqualFunc(got.Boards, want.Boards, maps.Equal) {
			t.Fatalf("read %d values and %d boards, want %d and %d", len(got.Values), len(got.Boards), len(want.Values), len(want.Boards))
		}
		if err := rsredis.RemoveSteps(ctx, rdb, day, []string{"user-aa", "user-ba"}, map[string][]string{"": {"user-aa"}, "eu": {"user-ba"}}); err != nil {
			t.Fatal(err)
		}
		delete(want.Values, "user-aa")
		delete(want.Values, "user-ba")
		delete(want.Boards[""], "user-aa")
		delete(want.Boards["eu"], "user-ba")
		if got, err = r.StepsDay(ctx, day); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got.Values, want.Values) || !maps.EqualFunc(got.Boards, want.Boards, maps.Equal) {
			t.Fatalf("after the removal: %d values, %d on the global board, want %d and %d", len(got.Values), len(got.Boards[""]), len(want.Values), len(want.Boards[""]))
		}
	})
}
