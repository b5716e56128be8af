package app_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/service/app"
	"github.com/rankstream/rankstream/internal/testenv"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// rulePair is a snapshot stored first and one written after it, each with items of its own so
// that the stored content tells which one won.
type rulePair struct {
	name     string
	old, new topics.TopKSnapshot
}

// rulePairs are the pairs of snapshots the stores are checked on: every combination of a new
// window earlier, the same or later (by a slide of 5 s); fewer, as many (other partitions) or
// more missing partitions; an older, equal or newer version; and an earlier or later
// generation time. Each pair gets a stream of its own.
func rulePairs() []rulePair {
	end := time.Date(2026, 11, 30, 12, 0, 5, 0, time.UTC)
	mk := func(stream string, shift time.Duration, version int64, generated time.Duration, missing []int32, tag string) topics.TopKSnapshot {
		e := end.Add(shift)
		return topics.TopKSnapshot{
			Stream: stream, WindowStart: e.Add(-time.Hour), WindowEnd: e,
			GeneratedAt: end.Add(2*time.Second + generated), Version: e.UnixMilli() + version, MissingPartitions: missing,
			Items: []topics.TopKItem{{Item: tag + "-a", Count: 50, Error: 1}, {Item: tag + "-b", Count: 40}},
		}
	}
	var pairs []rulePair
	for _, shift := range []time.Duration{-5 * time.Second, 0, 5 * time.Second} {
		for _, miss := range []struct {
			name     string
			old, new []int32
		}{
			{"none/none", nil, nil}, {"one/none", []int32{1}, nil}, {"none/one", nil, []int32{2}},
			{"one/other one", []int32{1}, []int32{2}}, {"three/one", []int32{0, 2, 5}, []int32{2}},
			{"one/three", []int32{1}, []int32{1, 3, 4}},
		} {
			for _, dv := range []int64{-1, 0, 1} {
				for _, dg := range []time.Duration{-time.Second, time.Second} {
					stream := fmt.Sprintf("p%d", len(pairs))
					pairs = append(pairs, rulePair{
						name: fmt.Sprintf("%s: window %+v, missing %s, version %+d, generated %+v", stream, shift, miss.name, dv, dg),
						old:  mk(stream, 0, 0, 0, miss.old, "old"),
						new:  mk(stream, shift, dv, dg, miss.new, "new"),
					})
				}
			}
		}
	}
	return pairs
}

// TestRedisScriptFollowsSupersedes: writing old then new through the Redis sink's script
// leaves exactly the snapshot topics.TopKSnapshot.Supersedes picks, on redis-server and on
// miniredis (which `rankstream dev` embeds), and Write reports whether new replaced old.
func TestRedisScriptFollowsSupersedes(t *testing.T) {
	for name, rdb := range map[string]func(t *testing.T) goredis.UniversalClient{
		"redis-server": func(t *testing.T) goredis.UniversalClient { return testenv.Redis(t) },
		"miniredis": func(t *testing.T) goredis.UniversalClient {
			mr, err := app.EmbeddedRedis("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(mr.Close)
			c := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
			t.Cleanup(func() { c.Close() })
			return c
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			client := rdb(t)
			w := rsredis.NewHotWriter(client)
			replaced, kept := 0, 0
			for _, p := range rulePairs() {
				if _, err := w.Write(ctx, p.old); err != nil {
					t.Fatalf("%s: old: %v", p.name, err)
				}
				wrote, err := w.Write(ctx, p.new)
				if err != nil {
					t.Fatalf("%s: new: %v", p.name, err)
				}
				want := p.old
				if p.new.Supersedes(p.old) {
					want, replaced = p.new, replaced+1
				} else {
					kept++
				}
				if wrote != p.new.Supersedes(p.old) {
					t.Errorf("%s: Write reported %v, Supersedes says %v", p.name, wrote, !wrote)
				}
				got, err := client.Get(ctx, rsredis.HotKey(p.new.Stream)).Result()
				if err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
				if wantJSON := mustJSON(t, want); got != wantJSON {
					t.Errorf("%s: stored\n%s\nSupersedes picks\n%s", p.name, got, wantJSON)
				}
				zs, err := client.ZRevRangeWithScores(ctx, rsredis.HotZSetKey(p.new.Stream), 0, -1).Result()
				if err != nil {
					t.Fatalf("%s: %v", p.name, err)
				}
				if len(zs) != len(want.Items) || zs[0].Member != want.Items[0].Item || zs[1].Member != want.Items[1].Item {
					t.Errorf("%s: ZSET %v, want the items of %v", p.name, zs, want.Items)
				}
			}
			if replaced == 0 || kept == 0 {
				t.Fatalf("%d pairs replaced, %d kept: the pairs do not exercise both outcomes", replaced, kept)
			}
		})
	}
}

func mustJSON(t *testing.T, s topics.TopKSnapshot) string {
	t.Helper()
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestClickHouseVersionFollowsCompleteness: writing every old snapshot, then every new one,
// through the history sink leaves visible (under FINAL and argMax) in each window the rows
// of the snapshot the Go rule picks: of two snapshots of a window, the more complete
// (topics.TopKSnapshot.Supersedes, which then agrees with Completeness), and as complete, the
// later generated (topk_history's version holds the generation time, not Version). Snapshots
// of different windows both stay (history). The version reads back the winner's number of
// missing partitions and generation time.
func TestClickHouseVersionFollowsCompleteness(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ch := e2e.NewHistory(t)
	sink, conn := ch.Sink, ch.Conn

	pairs := rulePairs()
	var want []string
	for _, p := range pairs {
		visible := []topics.TopKSnapshot{p.old, p.new}
		if p.old.WindowEnd.Equal(p.new.WindowEnd) {
			newWins := p.new.Supersedes(p.old)
			if p.new.Completeness() == p.old.Completeness() {
				newWins = p.new.GeneratedAt.After(p.old.GeneratedAt)
			}
			visible = []topics.TopKSnapshot{p.old}
			if newWins {
				visible = []topics.TopKSnapshot{p.new}
			}
		}
		for _, s := range visible {
			for rank, it := range s.Items {
				want = append(want, fmt.Sprintf("%s %d %d %s %d %d", s.Stream, s.WindowEnd.Unix(), rank+1, it.Item,
					len(s.MissingPartitions), s.GeneratedAt.UnixMilli()))
			}
		}
	}
	h := app.History{Sink: sink}
	for _, batch := range []func(rulePair) topics.TopKSnapshot{
		func(p rulePair) topics.TopKSnapshot { return p.old },
		func(p rulePair) topics.TopKSnapshot { return p.new },
	} {
		var snaps []topics.TopKSnapshot
		for _, p := range pairs {
			snaps = append(snaps, batch(p))
		}
		if err := h.Write(ctx, snaps); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	for name, query := range map[string]string{
		"FINAL": "SELECT stream, toUInt32(window_end) AS end, rank, item, " + rsclickhouse.TopKMissingSQL + " AS missing, " +
			rsclickhouse.TopKGeneratedAtSQL + " AS generated FROM topk_history FINAL",
		"argMax": "SELECT stream, end, rank, item, " + rsclickhouse.TopKMissingSQL + " AS missing, " +
			rsclickhouse.TopKGeneratedAtSQL + " AS generated FROM (SELECT stream, end, rank, item, v AS version FROM " +
			"(SELECT stream, toUInt32(window_end) AS end, rank, argMax(item, version) AS item, max(version) AS v " +
			"FROM topk_history GROUP BY stream, window_end, rank))",
	} {
		rows, err := conn.Query(ctx, query)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		for rows.Next() {
			var (
				stream, item string
				end, rank    uint32
				missing      int64
				generated    uint64
			)
			if err := rows.Scan(&stream, &end, &rank, &item, &missing, &generated); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			got = append(got, fmt.Sprintf("%s %d %d %s %d %d", stream, end, rank, item, missing, generated))
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: visible rows differ from the Go rule's pick:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
