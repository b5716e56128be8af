package hot_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/lovoo/goka"
	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/kafkaconf"
	"github.com/rankstream/rankstream/internal/testenv"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	"github.com/rankstream/rankstream/topics"
)

type query struct {
	term string
	ms   int64
}

// generate makes n queries over span of event time from start: a Zipf-like vocabulary plus
// two planted terms that rise and fall, in time order. Terms are already normalised (the test
// sends them with random case and spaces, which the pipeline must undo).
func generate(n int, start time.Time, span time.Duration) []query {
	rng := rand.New(rand.NewPCG(7, 7))
	out := make([]query, n)
	for i := range out {
		ms := start.UnixMilli() + int64(i)*span.Milliseconds()/int64(n)
		frac := float64(i) / float64(n)
		var term string
		switch p := rng.Float64(); {
		case p < 0.15*max(0, 1-abs(frac-0.3)/0.2):
			term = "black friday"
		case p < 0.15*max(0, 1-abs(frac-0.7)/0.2)+0.001:
			term = "snow storm"
		default:
			// rank k with probability ~ 1/k over 500 terms
			k := int(500*rng.Float64()*rng.Float64()) + 1
			term = fmt.Sprintf("term %d", k)
		}
		out[i] = query{term: term, ms: ms}
	}
	return out
}

func abs(x float64) float64 { return max(x, -x) }

func spell(rng *rand.Rand, term string) string {
	if rng.IntN(4) == 0 {
		return "  " + strings.ToUpper(term[:1]) + term[1:] + " "
	}
	return term
}

type row struct {
	WindowEnd time.Time `ch:"window_end"`
	Rank      uint32    `ch:"rank"`
	Item      string    `ch:"item"`
	Count     uint64    `ch:"count"`
	Error     uint64    `ch:"error"`
	Missing   int64     `ch:"missing"` // partitions the snapshot missed
}

// rowsQuery reads every snapshot of topk_history under FINAL.
const rowsQuery = "SELECT window_end, rank, item, count, error, " + rsclickhouse.TopKMissingSQL +
	" AS missing FROM topk_history FINAL WHERE stream = 'search' ORDER BY window_end, rank"

// TestHotSearchSnapshotsAreExact: queries over 30 minutes of event time go through
// `rankstream process` (hot group, merge group) on the real broker and kfake; every complete
// snapshot written to ClickHouse holds the exact top 10 of its 5-minute window (ties at rank 10
// aside), each item's true count lies within its bound, the latest snapshot is in Redis, and
// invalid queries are dead-lettered. Snapshots missing partitions (published after the merge's
// wait) are only the first windows, which partitions that started later cannot describe; their
// items' counts are within bounds too. Then a replay from offset 0, within the merge's memory
// of published windows, publishes nothing again: the complete windows keep the same rows,
// none added even before FINAL, and Redis the same latest snapshot.
func TestHotSearchSnapshotsAreExact(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		const window, slide = 5 * time.Minute, 5 * time.Second
		prefix := testenv.UniqueName(t, "hot") + "."
		kc := kafkaconf.Config{Brokers: brokers, Partitions: 8, Names: topics.Names{Prefix: prefix}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if _, err := kc.EnsureTopics(ctx, true); err != nil {
			t.Fatal(err)
		}
		conn, chDB := testenv.ClickHouse(t)
		chAddr := os.Getenv(testenv.EnvClickHouse)
		sink, err := rsclickhouse.Open(ctx, chAddr, chDB)
		if err != nil {
			t.Fatal(err)
		}
		defer sink.Close()
		if _, err := sink.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		redisAddr, redisDB := testenv.RedisAddr(t)

		start := time.Now().Add(-time.Hour).Truncate(time.Minute)
		queries := generate(100_000, start, 30*time.Minute)
		cl, err := kc.Client(kgo.ProducerLinger(5 * time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		rng := rand.New(rand.NewPCG(1, 2))
		topic := string(kc.Names.Stream(topics.SearchQueries))
		for i, q := range queries {
			v, _ := json.Marshal(map[string]any{"query": spell(rng, q.term), "ts": q.ms, "user_id": fmt.Sprint("u", i%997)})
			cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprint("u", i%997)), Value: v}, nil)
		}
		for _, bad := range []string{`{"query":"   ","ts":1}`, `{"query":"x"}`, `not json`, `{"query":"` + strings.Repeat("a", 300) + `","ts":1}`} {
			cl.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte("bad"), Value: []byte(bad)}, nil)
		}
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}

		args := []string{"process",
			"--brokers", strings.Join(brokers, ","), "--redis", fmt.Sprintf("redis://%s/%d", redisAddr, redisDB),
			"--topic-prefix", prefix, "--partitions", "8", "--http", "127.0.0.1:0", "--log-level", "warn",
			"--history", "--clickhouse", chAddr, "--clickhouse-database", chDB,
			"--hot-window", window.String(), "--hot-slide", slide.String(), "--hot-lookahead", "40m", "--hot-k", "20"}
		proc := testenv.StartProcess(t, "processor", testenv.Rankstream(t), args...)

		// Windows close up to the slowest input partition's newest event less the lateness.
		newest := map[int32]int64{}
		for i, q := range queries {
			p := kafkaconf.PartitionOf(fmt.Sprint("u", i%997), 8)
			newest[p] = max(newest[p], q.ms)
		}
		slowest := int64(-1)
		for _, ms := range newest {
			if slowest < 0 || ms < slowest {
				slowest = ms
			}
		}
		lastEnd := time.UnixMilli((slowest - 2000) / slide.Milliseconds() * slide.Milliseconds())
		var rows []row
		deadline := time.Now().Add(3 * time.Minute)
		for {
			rows = rows[:0]
			if err := conn.Select(ctx, &rows, rowsQuery); err != nil {
				t.Fatal(err)
			}
			// The merge partitions publish in parallel: wait for every window, and for the
			// partials of a lagging partition (a window missing partitions after complete ones).
			if complete(rows, slide) && !rows[len(rows)-1].WindowEnd.Before(lastEnd) && incompletePrefix(rows) >= 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("after 3 minutes ClickHouse has %d rows; the last window should end at %s", len(rows), lastEnd)
			}
			time.Sleep(500 * time.Millisecond)
		}

		byEnd := map[int64][]row{}
		for _, r := range rows {
			byEnd[r.WindowEnd.UnixMilli()] = append(byEnd[r.WindowEnd.UnixMilli()], r)
		}
		firstRow := incompletePrefix(rows)
		firstComplete := rows[firstRow].WindowEnd
		t.Logf("%d first windows published so far with partitions missing", firstComplete.Sub(rows[0].WindowEnd)/slide)
		checked := 0
		for endMs, snap := range byEnd {
			exact := map[string]uint64{}
			for _, q := range queries {
				if q.ms >= endMs-window.Milliseconds() && q.ms < endMs {
					exact[q.term]++
				}
			}
			counts := make([]uint64, 0, len(exact))
			for _, c := range exact {
				counts = append(counts, c)
			}
			slices.SortFunc(counts, func(a, b uint64) int { return cmp.Compare(b, a) })
			if len(counts) == 0 {
				t.Fatalf("a snapshot for the window ending %s, which holds no query", time.UnixMilli(endMs))
			}
			tenth := counts[min(9, len(counts)-1)]
			for _, r := range snap {
				truth := exact[r.Item]
				if truth > r.Count || truth < r.Count-r.Error {
					t.Fatalf("window ending %s: %q true count %d outside [%d, %d]", time.UnixMilli(endMs), r.Item, truth, r.Count-r.Error, r.Count)
				}
				if r.Missing == 0 && r.Rank <= 10 && truth < tenth {
					t.Fatalf("window ending %s: %q at rank %d has %d, below the exact 10th count %d", time.UnixMilli(endMs), r.Item, r.Rank, truth, tenth)
				}
			}
			if snap[0].Missing == 0 {
				checked++
			}
		}
		t.Logf("%d complete snapshots checked against exact counts", checked)
		if checked < 200 {
			t.Fatalf("only %d snapshots", checked)
		}

		rdb := goredis.NewClient(&goredis.Options{Addr: redisAddr, DB: redisDB})
		defer rdb.Close()
		var latest topics.TopKSnapshot
		raw, err := rdb.Get(ctx, "hot:search:latest").Bytes()
		if err == nil {
			err = json.Unmarshal(raw, &latest)
		}
		if err != nil || latest.WindowEnd.Before(lastEnd) || len(latest.Items) == 0 || latest.MissingPartitions != nil {
			t.Fatalf("hot:search:latest: %v %s", err, raw)
		}
		if dead := endOffsets(t, ctx, cl, string(kc.Names.Stream(topics.DLQ))); dead != 4 {
			t.Fatalf("%d dead letters, want 4", dead)
		}

		// Replay: stop, reset the hot groups to offset 0, run again. The merge group still holds
		// the windows it published (for 10 minutes), so the partials the hot group sends again
		// publish nothing: the complete windows keep their rows, none is added even before
		// FINAL, and Redis keeps the same latest snapshot, generation time included.
		written := countRows(t, conn, firstComplete)
		proc.Signal(syscall.SIGTERM)
		if err := proc.Wait(); err != nil {
			t.Fatalf("processor did not stop cleanly: %v\n%s", err, proc.Output())
		}
		for _, r := range []struct {
			group  goka.Group
			stream goka.Stream
		}{
			{topics.HotGroup, kc.Names.Stream(topics.SearchQueries)},
			{topics.HotGroup, kc.Names.Loop(topics.HotGroup)},
			{topics.HotMergeGroup, kc.Names.Stream(topics.HotPartials)},
		} {
			if _, err := kc.ResetOffsets(ctx, kc.Names.Group(r.group), r.stream, time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
		partialsTopic := string(kc.Names.Stream(topics.HotPartials))
		firstRun := endOffsets(t, ctx, cl, partialsTopic)
		restart := time.Now().UnixMilli()
		testenv.StartProcess(t, "replay", testenv.Rankstream(t), args...)
		// In topic order: once a group committed its input, what it sent is in the next topic.
		processed(t, ctx, cl, kc.Names.Group(topics.HotGroup), string(kc.Names.Stream(topics.SearchQueries)))
		processed(t, ctx, cl, kc.Names.Group(topics.HotGroup), string(kc.Names.Loop(topics.HotGroup)))
		processed(t, ctx, cl, kc.Names.Group(topics.HotMergeGroup), partialsTopic)
		if again := endOffsets(t, ctx, cl, partialsTopic); again < 2*firstRun-firstRun/10 {
			t.Fatalf("the replay sent %d partials, the first run %d", again-firstRun, firstRun)
		}
		var again []row
		if err := conn.Select(ctx, &again, rowsQuery); err != nil {
			t.Fatal(err)
		}
		if tail := len(rows) - firstRow; len(again) < tail || !slices.Equal(rows[firstRow:], again[len(again)-tail:]) {
			t.Fatalf("replay: complete windows differ under FINAL: %d rows, first run %d", len(again), len(rows))
		}
		if n := countRows(t, conn, firstComplete); n != written {
			var twice []struct {
				WindowEnd time.Time `ch:"window_end"`
				Versions  []string  `ch:"versions"`
			}
			_ = conn.Select(ctx, &twice, "SELECT window_end, groupUniqArray(concat(toString("+rsclickhouse.TopKMissingSQL+"), ' missing at ', toString("+
				rsclickhouse.TopKGeneratedAtSQL+"))) AS versions FROM topk_history WHERE window_end >= ? GROUP BY window_end HAVING length(versions) > 1 ORDER BY window_end", firstComplete)
			t.Fatalf("replay: %d rows stored for the complete windows, first run %d: published again (restart at %d): %v", n, written, restart, twice)
		}
		var replayed topics.TopKSnapshot
		raw, err = rdb.Get(ctx, "hot:search:latest").Bytes()
		if err == nil {
			err = json.Unmarshal(raw, &replayed)
		}
		if err != nil || !reflect.DeepEqual(replayed, latest) {
			t.Fatalf("replay: latest snapshot %+v, first run %+v (%v)", replayed, latest, err)
		}
	})
}

// incompletePrefix returns the index of the first row of a complete snapshot in rows (ordered
// by window end), or -1 if there is none or a snapshot missing partitions comes after it.
func incompletePrefix(rows []row) int {
	first := slices.IndexFunc(rows, func(r row) bool { return r.Missing == 0 })
	if first < 0 || slices.ContainsFunc(rows[first:], func(r row) bool { return r.Missing != 0 }) {
		return -1
	}
	return first
}

// countRows counts topk_history's rows of windows ending at from or later, as written.
func countRows(t *testing.T, conn driver.Conn, from time.Time) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM topk_history WHERE window_end >= ?", from).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// endOffsets sums the end offsets of topic's partitions.
func endOffsets(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) int64 {
	t.Helper()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	ends.Each(func(o kadm.ListedOffset) { sum += o.Offset })
	return sum
}

// complete tells whether rows (ordered by window end) hold every window from the first to the
// last, one slide apart.
func complete(rows []row, slide time.Duration) bool {
	if len(rows) == 0 {
		return false
	}
	ends := map[int64]bool{}
	for _, r := range rows {
		ends[r.WindowEnd.UnixMilli()] = true
	}
	span := rows[len(rows)-1].WindowEnd.Sub(rows[0].WindowEnd)
	return len(ends) == int(span/slide)+1
}
