package redis_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// TestReaderReadsAlikeOnRESP2AndRESP3: OpenReader's client speaks RESP2 (no push check before
// each reply), and every read of the query API gives through it what it gives through a RESP3
// client (go-redis's default, which this package's other tests read with): a steps board
// whose composite scores span the day's extremes (the largest score, the first and last
// millisecond of its span), score boards of 1 and 4 shards, a member without an entry, friends and a hot
// snapshot, through a Reader and a batched Reader.
func TestReaderReadsAlikeOnRESP2AndRESP3(t *testing.T) {
	addr, db := testenv.RedisAddr(t)
	url := fmt.Sprintf("redis://%s/%d", addr, db)
	ctx := context.Background()
	open := func(url string) goredis.UniversalClient {
		t.Helper()
		rdb, err := rsredis.OpenReader(url, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rdb.Close() })
		return rdb
	}
	resp2, resp3 := open(url), open(url+"?protocol=3")
	if p := resp2.(*goredis.Client).Options().Protocol; p != 2 {
		t.Fatalf("OpenReader's protocol %d, want 2", p)
	}
	if p := resp3.(*goredis.Client).Options().Protocol; p != 3 {
		t.Fatalf("protocol=3 in the URL gave %d", p)
	}

	day := board.Day(20261130)
	c := board.DayComposite(day)
	first, last := day.FirstInstant().UnixMilli(), day.LastInstant().UnixMilli()-1
	rng := rand.New(rand.NewPCG(5, 9))
	var zs []goredis.Z
	var members []string
	for i := range 500 {
		score, reached := rng.Int64N(c.MaxScore()+1), first+rng.Int64N(last-first+1)
		switch i % 7 {
		case 0:
			score = c.MaxScore()
		case 1:
			reached = first
		case 2:
			reached = last
		case 3:
			score = 0
		}
		v, err := c.Encode(score, reached)
		if err != nil {
			t.Fatal(err)
		}
		m := fmt.Sprintf("u%03d", i)
		zs = append(zs, goredis.Z{Score: v, Member: m})
		members = append(members, m)
	}
	writer := resp3
	if err := writer.ZAdd(ctx, rsredis.StepsGlobalBoard(day), zs...).Err(); err != nil {
		t.Fatal(err)
	}
	refs := []rsredis.BoardRef{refOf("one", 1), refOf("four", 4)}
	var writes []rsredis.BoardWrite
	for _, ref := range refs {
		for i, m := range members[:300] {
			writes = append(writes, rsredis.BoardWrite{Ref: ref, Member: m, Present: true,
				Score: rng.Int64N(2*board.MaxScore+1) - board.MaxScore, ReachedMs: int64(i % 3)})
		}
	}
	if err := rsredis.NewBoardWriter(writer).Write(ctx, writes); err != nil {
		t.Fatal(err)
	}
	if err := writer.SAdd(ctx, rsredis.FriendsKey("me"), "u001", "nobody").Err(); err != nil {
		t.Fatal(err)
	}
	snap := topics.TopKSnapshot{Stream: topics.SearchStream, WindowStart: time.UnixMilli(1_796_000_000_000).UTC(),
		WindowEnd: time.UnixMilli(1_796_003_600_000).UTC(), GeneratedAt: time.UnixMilli(1_796_003_600_500).UTC(), Version: 7,
		Items: []topics.TopKItem{{Item: "a", Count: 3}, {Item: "b", Count: 1}}}
	if _, err := rsredis.NewHotWriter(writer).Write(ctx, snap); err != nil {
		t.Fatal(err)
	}

	// reads are every read of the query API, each returning what it read (an error as its text).
	reads := map[string]func(r *rsredis.Reader) any{
		"steps page": func(r *rsredis.Reader) any { return all(r.StepsPage(ctx, day, "", 0, 100)) },
		"steps page 450": func(r *rsredis.Reader) any {
			return all(r.StepsPage(ctx, day, "", 450, 100))
		},
		"hot": func(r *rsredis.Reader) any {
			s, err := r.HotSnapshot(ctx, topics.SearchStream)
			return []any{s, errText(err)}
		},
		"friends": func(r *rsredis.Reader) any {
			fs, err := r.Friends(ctx, "me")
			st, err2 := r.StepsStandings(ctx, day, []string{"u001", "nobody", "u499"})
			bs, err3 := r.BoardStandings(ctx, refs[1], []string{"u001", "nobody"})
			return []any{len(fs), errText(err), st, errText(err2), bs, errText(err3)}
		},
	}
	for i := 0; i < len(members); i += 37 {
		m := members[i]
		reads["steps standing "+m] = func(r *rsredis.Reader) any { return all(r.StepsStanding(ctx, day, "", m, 5)) }
		for _, ref := range refs {
			reads[fmt.Sprintf("%s standing %s", ref.Board, m)] = func(r *rsredis.Reader) any { return all(r.BoardStanding(ctx, ref, m, 5)) }
		}
	}
	for _, ref := range refs {
		for _, offset := range []int{0, 20, 290} {
			reads[fmt.Sprintf("%s page %d", ref.Board, offset)] = func(r *rsredis.Reader) any { return all(r.BoardPage(ctx, ref, offset, 100)) }
		}
		reads[ref.Board+" standing of nobody"] = func(r *rsredis.Reader) any { return all(r.BoardStanding(ctx, ref, "nobody", 5)) }
	}
	reads["steps standing of nobody"] = func(r *rsredis.Reader) any { return all(r.StepsStanding(ctx, day, "", "nobody", 5)) }

	for name, read := range reads {
		want := read(rsredis.NewReader(resp3))
		for kind, r := range map[string]*rsredis.Reader{"reader": rsredis.NewReader(resp2), "batched reader": rsredis.NewBatchedReader(resp2)} {
			if got := read(r); !reflect.DeepEqual(got, want) {
				t.Errorf("%s through RESP2 (%s):\n got %+v\nwant %+v", name, kind, got, want)
			}
		}
	}
	// The extremes were read back exactly (not only alike).
	_, rows, err := rsredis.NewReader(resp2).StepsPage(ctx, day, "", 0, 500)
	if err != nil || len(rows) != 500 {
		t.Fatalf("steps page of 500: %d rows, %v", len(rows), err)
	}
	for _, row := range rows {
		i := 0
		if _, err := fmt.Sscanf(row.Member, "u%03d", &i); err != nil {
			t.Fatal(err)
		}
		if v, _ := c.Encode(row.Score, row.ReachedMs); v != zs[i].Score {
			t.Fatalf("%s read as %d steps at %d: composite %v, written %v", row.Member, row.Score, row.ReachedMs, v, zs[i].Score)
		}
	}
}

// all is a read's results as one comparable value (an error as its text).
func all(total int64, rows []rsredis.Ranked, err error) []any {
	return []any{total, rows, errText(err)}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
