package redis_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/app"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

var hotBase = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// snap returns a one-hour window ending n slides of 5 s after hotBase, with the given version
// and items whose counts fall from 100 by 10.
func snap(n int, version int64, items ...string) topics.TopKSnapshot {
	end := hotBase.Add(time.Duration(n) * 5 * time.Second)
	s := topics.TopKSnapshot{
		Stream: topics.SearchStream, WindowStart: end.Add(-time.Hour), WindowEnd: end,
		GeneratedAt: time.UnixMilli(version), Version: version,
	}
	for i, it := range items {
		s.Items = append(s.Items, topics.TopKItem{Item: it, Count: uint64(100 - 10*i), Error: uint64(i)})
	}
	return s
}

// eachServer runs f on the real redis-server and on the real 3-master Redis Cluster.
func eachServer(t *testing.T, f func(t *testing.T, rdb goredis.UniversalClient)) {
	t.Run("redis-server", func(t *testing.T) { f(t, testenv.Redis(t)) })
	t.Run("redis-cluster", func(t *testing.T) {
		rdb, _ := testenv.RedisCluster(t)
		f(t, rdb)
	})
}

// allKeys is KEYS pattern over the whole keyspace: on a Redis Cluster, every master's.
func allKeys(t *testing.T, ctx context.Context, rdb goredis.UniversalClient, pattern string) []string {
	t.Helper()
	cc, ok := rdb.(*goredis.ClusterClient)
	if !ok {
		keys, err := rdb.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		return keys
	}
	var mu sync.Mutex
	var keys []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
		k, err := m.Keys(ctx, pattern).Result()
		mu.Lock()
		keys = append(keys, k...)
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// eachRedis runs f on the real redis-server, the real Redis Cluster and on miniredis, which
// `rankstream dev` embeds.
func eachRedis(t *testing.T, f func(t *testing.T, rdb goredis.UniversalClient)) {
	eachServer(t, f)
	t.Run("miniredis", func(t *testing.T) {
		mr, err := app.EmbeddedRedis("127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(mr.Close)
		rdb := goredis.NewClient(&goredis.Options{Addr: mr.Addr()})
		t.Cleanup(func() { rdb.Close() })
		f(t, rdb)
	})
}

// stored reads both keys of a stream: the JSON snapshot and the ZSET as "item=count" strings,
// highest first.
func stored(t *testing.T, rdb goredis.UniversalClient, stream string) (topics.TopKSnapshot, []string) {
	t.Helper()
	ctx := context.Background()
	var s topics.TopKSnapshot
	b, err := rdb.Get(ctx, rsredis.HotKey(stream)).Bytes()
	if err != nil {
		t.Fatalf("GET %s: %v", rsredis.HotKey(stream), err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("stored JSON %s: %v", b, err)
	}
	zs, err := rdb.ZRevRangeWithScores(ctx, rsredis.HotZSetKey(stream), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var z []string
	for _, e := range zs {
		z = append(z, fmt.Sprintf("%s=%g", e.Member, e.Score))
	}
	return s, z
}

// missing returns s with the given missing partitions.
func missing(s topics.TopKSnapshot, partitions ...int32) topics.TopKSnapshot {
	s.MissingPartitions = partitions
	return s
}

// TestHotWriterNeverGoesBack: a later window wins; within a window the snapshot missing fewer
// partitions wins whatever its version, then the newer version; an equal one is written again.
func TestHotWriterNeverGoesBack(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb goredis.UniversalClient) {
		w := rsredis.NewHotWriter(rdb)
		ctx := context.Background()
		steps := []struct {
			name     string
			snap     topics.TopKSnapshot
			replaced bool
			want     []string // ZSET after the step
			version  int64    // stored version after the step
			missing  int      // stored number of missing partitions after the step
		}{
			{"first snapshot", snap(10, 1000, "a", "b", "c"), true, []string{"a=100", "b=90", "c=80"}, 1000, 0},
			{"retry of the same snapshot: written again", snap(10, 1000, "a", "b", "c"), true, []string{"a=100", "b=90", "c=80"}, 1000, 0},
			{"earlier window", snap(9, 5000, "x"), false, []string{"a=100", "b=90", "c=80"}, 1000, 0},
			{"same window, older version", snap(10, 999, "y"), false, []string{"a=100", "b=90", "c=80"}, 1000, 0},
			{"same window, newer version: a recomputation", snap(10, 2000, "c", "d"), true, []string{"c=100", "d=90"}, 2000, 0},
			{"same window, newer version, a partition missing", missing(snap(10, 3000, "y"), 3), false, []string{"c=100", "d=90"}, 2000, 0},
			{"later window, two partitions missing", missing(snap(11, 1500, "e", "c"), 1, 3), true, []string{"e=100", "c=90"}, 1500, 2},
			{"same window, three missing, newer version", missing(snap(11, 9000, "x"), 1, 3, 5), false, []string{"e=100", "c=90"}, 1500, 2},
			{"same window, one missing, older version: a late partial", missing(snap(11, 1400, "e", "f"), 3), true, []string{"e=100", "f=90"}, 1400, 1},
			{"the same again", missing(snap(11, 1400, "e", "f"), 3), true, []string{"e=100", "f=90"}, 1400, 1},
			{"same window complete", snap(11, 1400, "e", "f", "a"), true, []string{"e=100", "f=90", "a=80"}, 1400, 0},
			{"an incomplete one again after it", missing(snap(11, 1400, "e", "f"), 3), false, []string{"e=100", "f=90", "a=80"}, 1400, 0},
			{"later window without items", snap(12, 1600), true, nil, 1600, 0},
			{"then an earlier one again", snap(11, 9000, "z"), false, nil, 1600, 0},
		}
		for _, st := range steps {
			published := freshnessCount(t)
			replaced, err := w.Write(ctx, st.snap)
			if err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			if replaced != st.replaced {
				t.Fatalf("%s: replaced = %v, want %v", st.name, replaced, st.replaced)
			}
			// Only a snapshot that replaced the stored one is observed, with its window's end.
			if n := freshnessCount(t) - published; n != map[bool]uint64{true: 1}[replaced] {
				t.Errorf("%s: %d freshness observations, want one per replacing write", st.name, n)
			}
			if end := gaugeValue(t, obs.HotSnapshotWindowEnd); replaced && end != float64(st.snap.WindowEnd.UnixMilli())/1000 {
				t.Errorf("%s: window end gauge %v, want %v", st.name, end, st.snap.WindowEnd.Unix())
			}
			s, z := stored(t, rdb, topics.SearchStream)
			if strings.Join(z, " ") != strings.Join(st.want, " ") || s.Version != st.version || len(s.MissingPartitions) != st.missing {
				t.Fatalf("%s: stored version %d, missing %v, ZSET %v; want version %d, %d missing, ZSET %v",
					st.name, s.Version, s.MissingPartitions, z, st.version, st.missing, st.want)
			}
			if len(s.Items) != len(st.want) {
				t.Fatalf("%s: JSON has %d items, ZSET %d", st.name, len(s.Items), len(st.want))
			}
		}
	})
}

func freshnessCount(t *testing.T) uint64 {
	t.Helper()
	var m dto.Metric
	if err := obs.HotSnapshotFreshness.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}

func gaugeValue(t *testing.T, g prometheus.Gauge) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetGauge().GetValue()
}

// TestHotWriterReadsSnapshotsWithoutMissingPartitions: a snapshot stored before
// missing_partitions existed counts as complete, so an incomplete one of its window does not
// replace it.
func TestHotWriterReadsSnapshotsWithoutMissingPartitions(t *testing.T) {
	eachRedis(t, func(t *testing.T, rdb goredis.UniversalClient) {
		ctx := context.Background()
		old := `{"stream":"search","window_start":"2026-11-30T11:00:50.000Z","window_end":"2026-11-30T12:00:50.000Z",` +
			`"generated_at":"2026-11-30T12:00:51.000Z","version":10,"items":[{"item":"old","count":5,"error":0}]}`
		rdb.Set(ctx, rsredis.HotKey("search"), old, 0)
		w := rsredis.NewHotWriter(rdb)
		if ok, err := w.Write(ctx, missing(snap(10, 20, "new"), 4)); err != nil || ok {
			t.Fatalf("incomplete over an old complete snapshot: Write = %v, %v; want false", ok, err)
		}
		if ok, err := w.Write(ctx, snap(10, 20, "new")); err != nil || !ok {
			t.Fatalf("complete, newer version: Write = %v, %v; want true", ok, err)
		}
	})
}

func TestHotWriterStoresTheContractJSON(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb goredis.UniversalClient) {
		w := rsredis.NewHotWriter(rdb)
		s := snap(0, 1796040007013, "weather", "snow storm")
		s.Stream = "" // the default stream
		s.MissingPartitions = []int32{5}
		if ok, err := w.Write(context.Background(), s); err != nil || !ok {
			t.Fatalf("Write = %v, %v", ok, err)
		}
		got := rdb.Get(context.Background(), "hot:search:latest").Val()
		want := `{"stream":"search","window_start":"2026-11-30T11:00:00.000Z","window_end":"2026-11-30T12:00:00.000Z",` +
			`"generated_at":"2026-11-30T12:00:07.013Z","version":1796040007013,` +
			`"items":[{"item":"weather","count":100,"error":0},{"item":"snow storm","count":90,"error":1}],"missing_partitions":[5],"dropped":0}`
		if got != want {
			t.Fatalf("hot:search:latest =\n%s\nwant\n%s", got, want)
		}
		if z := rdb.ZRangeArgs(context.Background(), goredis.ZRangeArgs{Key: "{hot:search:latest}:z", Start: 0, Stop: -1, Rev: true}).Val(); strings.Join(z, ",") != "weather,snow storm" {
			t.Fatalf("ZSET mirror %v", z)
		}
	})
}

func TestHotWriterStreamsAreSeparate(t *testing.T) {
	rdb := testenv.Redis(t)
	w := rsredis.NewHotWriter(rdb)
	ctx := context.Background()
	trends := snap(1, 1, "t")
	trends.Stream = "trends"
	for _, s := range []topics.TopKSnapshot{snap(5, 1, "s"), trends} {
		if ok, err := w.Write(ctx, s); err != nil || !ok {
			t.Fatalf("Write %s = %v, %v", s.Stream, ok, err)
		}
	}
	// The trends snapshot is of an earlier window, yet it is stored: streams do not compete.
	if _, z := stored(t, rdb, "trends"); strings.Join(z, " ") != "t=100" {
		t.Fatalf("hot:trends ZSET %v", z)
	}
	if _, z := stored(t, rdb, "search"); strings.Join(z, " ") != "s=100" {
		t.Fatalf("hot:search ZSET %v", z)
	}
}

func TestHotWriterReplacesGarbage(t *testing.T) {
	rdb := testenv.Redis(t)
	ctx := context.Background()
	rdb.Set(ctx, rsredis.HotKey("search"), "not json", 0)
	rdb.ZAdd(ctx, rsredis.HotZSetKey("search"), goredis.Z{Score: 1, Member: "stale"})
	if ok, err := rsredis.NewHotWriter(rdb).Write(ctx, snap(0, 1, "a")); err != nil || !ok {
		t.Fatalf("Write over garbage = %v, %v", ok, err)
	}
	if _, z := stored(t, rdb, "search"); strings.Join(z, " ") != "a=100" {
		t.Fatalf("ZSET %v", z)
	}
}

func TestHotWriterRejectsInvalidSnapshots(t *testing.T) {
	rdb := testenv.Redis(t)
	w := rsredis.NewHotWriter(rdb)
	// topics tests Validate case by case; here: the sink refuses what it rejects.
	bad := map[string]func(*topics.TopKSnapshot){
		"stream with a brace":     func(s *topics.TopKSnapshot) { s.Stream = "a}b" },
		"version over 2^53":       func(s *topics.TopKSnapshot) { s.Version = 1 << 53 },
		"item twice":              func(s *topics.TopKSnapshot) { s.Items[1].Item = "a" },
		"not by count descending": func(s *topics.TopKSnapshot) { s.Items[1].Count = 101 },
	}
	for name, mutate := range bad {
		s := snap(0, 1, "a", "b")
		mutate(&s)
		if _, err := w.Write(context.Background(), s); !errors.Is(err, topics.ErrInvalidSnapshot) {
			t.Errorf("%s: err = %v, want ErrInvalidSnapshot", name, err)
		}
	}
	if n := rdb.DBSize(context.Background()).Val(); n != 0 {
		t.Fatalf("%d keys written by invalid snapshots", n)
	}
}

// TestHotWriterConcurrentWritersKeepTheLatest: writers racing with snapshots in any order
// leave the latest window, with the JSON and the ZSET of the same snapshot.
func TestHotWriterConcurrentWritersKeepTheLatest(t *testing.T) {
	rdb := testenv.Redis(t)
	w := rsredis.NewHotWriter(rdb)
	const n = 400
	order := rand.New(rand.NewPCG(1, 2)).Perm(n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for _, i := range order {
		wg.Go(func() {
			if _, err := w.Write(context.Background(), snap(i, int64(i), fmt.Sprint("item", i))); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	s, z := stored(t, rdb, "search")
	last := fmt.Sprint("item", n-1)
	if !s.WindowEnd.Equal(snap(n-1, 0).WindowEnd) || len(s.Items) != 1 || s.Items[0].Item != last || strings.Join(z, " ") != last+"=100" {
		t.Fatalf("stored window %s items %v ZSET %v, want the last window and %s", s.WindowEnd, s.Items, z, last)
	}
}

// TestHotKeysShareASlot: the script touches both keys, which a Redis Cluster allows only if
// they hash to one slot. The expected slots were read from a cluster-enabled redis-server 7.0
// (CLUSTER KEYSLOT); go-redis does not export its slot function.
func TestHotKeysShareASlot(t *testing.T) {
	for key, want := range map[string]int{
		"foo": 12182, "123456789": 12739,
		"hot:search:latest": 8241, "{hot:search:latest}:z": 8241,
		"hot:trends:latest": 11581, "{hot:trends:latest}:z": 11581,
	} {
		if got := rsredis.KeySlot(key); got != want {
			t.Errorf("slot of %q = %d, CLUSTER KEYSLOT says %d", key, got, want)
		}
	}
	for _, stream := range []string{"search", "trends", "a.b-c_1"} {
		if a, b := rsredis.KeySlot(rsredis.HotKey(stream)), rsredis.KeySlot(rsredis.HotZSetKey(stream)); a != b {
			t.Errorf("stream %s: %s in slot %d, %s in slot %d", stream, rsredis.HotKey(stream), a, rsredis.HotZSetKey(stream), b)
		}
	}
}

// TestHotWriterLargeSnapshot: the script adds a ZSET's members in chunks; a snapshot of
// thousands of items arrives whole.
func TestHotWriterLargeSnapshot(t *testing.T) {
	rdb := testenv.Redis(t)
	s := snap(0, 1)
	const n = 3000
	for i := range n {
		s.Items = append(s.Items, topics.TopKItem{Item: fmt.Sprintf("q%04d", i), Count: uint64(n - i)})
	}
	if ok, err := rsredis.NewHotWriter(rdb).Write(context.Background(), s); err != nil || !ok {
		t.Fatalf("Write = %v, %v", ok, err)
	}
	got, z := stored(t, rdb, "search")
	if len(got.Items) != n || len(z) != n || z[0] != fmt.Sprintf("q0000=%d", n) || z[n-1] != fmt.Sprintf("q%04d=1", n-1) {
		t.Fatalf("stored %d items, ZSET %d members from %s to %s", len(got.Items), len(z), z[0], z[len(z)-1])
	}
}
