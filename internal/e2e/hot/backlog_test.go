package hote2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/hot"
	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/topics"
)

// TestHotSearchBacklog: a backlog of 30k queries (60k skewed) over 90 minutes of event time, processed with
// default flags, in the shapes a consumer catching up meets: all of it produced before the
// processor starts (8 partitions, and 1), or while it runs (3); one input partition holding
// all of the first hour (maximal skew, 8 partitions). Every window up to the last one is emitted by every
// partition, and their partials, merged, hold the exact top 10 of the window with honest
// bounds and report no drop; the latest snapshot in Redis reports none either, and
// rankstream_hot_dropped_total is 0 on the process's /metrics. (The partials are read from
// Kafka rather than snapshots from ClickHouse: the same check, without a ClickHouse insert
// per window. TestHotSearch covers the history.)
func TestHotSearchBacklog(t *testing.T) {
	t.Parallel()
	for _, sh := range []struct {
		name       string
		partitions int
		during     bool // produced while the processor runs (else all of it before it starts)
		skew       bool // input partition 0 holds all of the first hour
	}{
		{name: "before/8", partitions: 8},
		{name: "during/3", partitions: 3, during: true},
		{name: "skew/8", partitions: 8, skew: true},
		{name: "before/1", partitions: 1},
	} {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			testenv.EachKafka(t, func(t *testing.T, brokers []string) {
				t.Parallel()
				r := e2e.NewRun(t, brokers, "hotlag", e2e.WithPartitions(sh.partitions))
				kc, kcl := r.Kafka, r.Admin
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				start := time.Now().Add(-3 * time.Hour).Truncate(time.Minute)
				n := 30_000
				if sh.skew {
					n = 60_000 // the other partitions' 20k early queries exceed what the loop partitions may hold (maxHeld)
				}
				queries := generate(n, start, 90*time.Minute)
				users := usersByPartition(sh.partitions, 50)
				rng := rand.New(rand.NewPCG(5, 6))
				recs := make([]*kgo.Record, len(queries))
				newest := map[int32]int64{}
				topic := string(kc.Names.Stream(topics.SearchQueries))
				for i, q := range queries {
					part := int32(rng.IntN(sh.partitions))
					if sh.skew {
						part = 1 + int32(rng.IntN(sh.partitions-1)) // the first hour goes to 0 only
						if q.ms < start.Add(time.Hour).UnixMilli() || rng.IntN(sh.partitions) == 0 {
							part = 0
						}
					}
					user := users[part][rng.IntN(len(users[part]))]
					v := searchQuery(spell(rng, q.term), q.ms, user)
					recs[i] = &kgo.Record{Topic: topic, Key: []byte(user), Value: v}
					newest[part] = max(newest[part], q.ms)
				}
				slowest := newest[0]
				for _, ms := range newest {
					slowest = min(slowest, ms)
				}
				lastEnd := time.UnixMilli((slowest - 2000) / e2eSlide.Milliseconds() * e2eSlide.Milliseconds())
				cl, err := kc.KgoClient(kgo.ProducerLinger(5 * time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				defer cl.Close()
				produce := func(recs []*kgo.Record) {
					if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
						t.Error(err)
					}
				}

				metrics := testenv.FreeAddr(t)
				args := r.ProcessArgs("--http", metrics)
				var proc *testenv.Process
				if sh.during {
					proc = testenv.StartProcess(t, "processor", testenv.Rankstream(t), args...)
					for i := 0; i < len(recs); i += 1000 {
						produce(recs[i:min(i+1000, len(recs))])
						time.Sleep(20 * time.Millisecond)
					}
				} else {
					produce(recs)
					proc = testenv.StartProcess(t, "processor", testenv.Rankstream(t), args...)
				}
				began := time.Now()
				rdb := r.Redis
				var latest topics.TopKSnapshot
				testenv.WaitFor(t, 5*time.Minute, "the window ending "+lastEnd.String()+" in Redis", func() bool {
					if err := proc.Exited(); err != nil {
						t.Fatalf("processor %v\n%s", err, proc.Output())
					}
					latest = latestSnapshot(t, ctx, rdb)
					return !latest.WindowEnd.Before(lastEnd)
				})
				rows := mergedPartials(t, ctx, kcl, sh.partitions)
				if !complete(rows) || rows[len(rows)-1].WindowEnd.Before(lastEnd) {
					t.Fatalf("windows from %s to %s, not every one up to %s", rows[0].WindowEnd, rows[len(rows)-1].WindowEnd, lastEnd)
				}
				least := 1000 // from the first event's window on
				if sh.skew {
					least = 300 // the first window ends once every partition has begun, an hour in
				}
				checkExact(t, rows, queries, least)
				dropped, ok := droppedTotal(t, metrics)
				if !ok || dropped != 0 {
					t.Fatalf("rankstream_hot_dropped_total = %v (exported: %v), want 0", dropped, ok)
				}
				if latest.Dropped != 0 || len(latest.MissingPartitions) > 0 {
					t.Fatalf("latest snapshot ends %s with %d dropped, missing %v", latest.WindowEnd, latest.Dropped, latest.MissingPartitions)
				}
				t.Logf("%d queries, %d rows, every window up to %s in %s, 0 dropped", len(queries), len(rows), lastEnd.Format(time.TimeOnly), time.Since(began).Round(time.Second))
				stop(t, proc)
			})
		})
	}
}

// TestHotSearchLateQueriesAreCounted: queries dated before windows already published are
// dropped, and said so: rankstream_hot_dropped_total{reason="late"} and the dropped field of
// the next snapshot both count them exactly.
func TestHotSearchLateQueriesAreCounted(t *testing.T) {
	t.Parallel()
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		const late = 37
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		run := startOnePartition(t, brokers, "hotlate")
		proc, cl, rdb, metrics, topic := run.proc, run.cl, run.rdb, run.metrics, run.topic
		send := func(term string, ts time.Time, n int) {
			recs := make([]*kgo.Record, n)
			for i := range recs {
				v := searchQuery(term, ts.UnixMilli(), "u")
				recs[i] = &kgo.Record{Topic: topic, Key: []byte("u"), Value: v}
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		latest := func() topics.TopKSnapshot { return latestSnapshot(t, ctx, rdb) }
		t0 := time.Now().Add(-time.Hour).Truncate(time.Minute)
		for m := range 10 {
			send("on time", t0.Add(time.Duration(m)*time.Minute), 10)
		}
		closed := t0.Add(9 * time.Minute).Add(-5 * time.Second)
		testenv.WaitFor(t, 2*time.Minute, "the window ending "+closed.String(), func() bool {
			if err := proc.Exited(); err != nil {
				t.Fatalf("processor %v\n%s", err, proc.Output())
			}
			return !latest().WindowEnd.Before(closed)
		})
		if s := latest(); s.Dropped != 0 {
			t.Fatalf("before any late query, the latest snapshot reports %d dropped", s.Dropped)
		}
		send("too late", t0.Add(time.Minute), late)             // windows up to t0+9m are published
		send("on time", t0.Add(9*time.Minute+5*time.Second), 1) // closes exactly the next window
		testenv.WaitFor(t, 2*time.Minute, "a snapshot after the late queries", func() bool {
			return latest().WindowEnd.After(closed)
		})
		s := latest()
		for _, it := range s.Items {
			if it.Item == "too late" {
				t.Fatalf("the late queries were counted: %+v", s.Items)
			}
		}
		dropped, ok := droppedTotal(t, metrics)
		if s.Dropped != late || !ok || dropped != late {
			t.Fatalf("snapshot ending %s reports %d dropped, rankstream_hot_dropped_total = %v (exported: %v); want %d", s.WindowEnd, s.Dropped, dropped, ok, late)
		}
		if !strings.Contains(proc.Output(), "hot: search queries dropped") {
			t.Fatalf("no warning about the dropped queries:\n%s", proc.Output())
		}
		stop(t, proc)
	})
}

// onePartition is a `rankstream process` with default hot-search flags on topics of one
// partition, with a producer and a client of the process's Redis database.
type onePartition struct {
	kc      *kafka.Client
	proc    *testenv.Process
	cl      *kgo.Client
	rdb     *goredis.Client
	metrics string // address of its /metrics
	topic   string // its search.queries
}

// startOnePartition starts a onePartition on a run of one partition (named after prefix).
func startOnePartition(t *testing.T, brokers []string, prefix string) onePartition {
	t.Helper()
	r := e2e.NewRun(t, brokers, prefix, e2e.WithPartitions(1))
	metrics := testenv.FreeAddr(t)
	proc := r.Start("processor", "--http", metrics)
	cl, err := r.Kafka.KgoClient(kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return onePartition{kc: r.Admin, proc: proc, cl: cl, rdb: r.Redis, metrics: metrics, topic: r.Topic(topics.SearchQueries)}
}

// latestSnapshot reads hot:search:latest; the zero snapshot before there is one.
func latestSnapshot(t *testing.T, ctx context.Context, rdb *goredis.Client) (s topics.TopKSnapshot) {
	t.Helper()
	raw, err := rdb.Get(ctx, "hot:search:latest").Bytes()
	if err == nil {
		err = json.Unmarshal(raw, &s)
	}
	if err != nil && !errors.Is(err, goredis.Nil) {
		t.Fatal(err)
	}
	return s
}

// mergedPartials reads every partial in hot.partials and merges each window's (as the merge
// group does: disjoint lists) into rows ordered by window end and rank. It fails on a window
// some partition did not emit and on a partial reporting dropped queries.
func mergedPartials(t *testing.T, ctx context.Context, cl *kafka.Client, partitions int) []row {
	t.Helper()
	byEnd := readPartials(t, ctx, cl)
	var rows []row
	for _, end := range slices.Sorted(maps.Keys(byEnd)) {
		if len(byEnd[end]) != partitions {
			t.Fatalf("the window ending %s has partials of %d partitions, want %d", time.UnixMilli(end), len(byEnd[end]), partitions)
		}
		var lists [][]sketch.Item
		for _, p := range byEnd[end] {
			if p.Dropped != 0 {
				t.Fatalf("partition %d dropped %d queries in the window ending %s", p.Partition, p.Dropped, time.UnixMilli(p.WindowEnd))
			}
			lists = append(lists, p.SketchItems())
		}
		for i, it := range sketch.MergeTopK(hot.DefaultConfig().K, lists...) {
			rows = append(rows, row{WindowEnd: time.UnixMilli(end), Rank: uint32(i + 1), Item: it.Item, Count: it.Count, Error: it.Error})
		}
	}
	if len(rows) == 0 {
		t.Fatal("no partial")
	}
	return rows
}

// readPartials reads every partial in hot.partials, by window end and partition. It fails on a
// partition emitting a window twice with other contents.
func readPartials(t *testing.T, ctx context.Context, cl *kafka.Client) map[int64]map[int32]topics.HotPartial {
	t.Helper()
	topic := string(cl.Config().Names.Stream(topics.HotPartials))
	ends, err := cl.Admin().ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	from, to := map[int32]int64{}, map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { from[o.Partition], to[o.Partition] = 0, o.Offset })
	byEnd := map[int64]map[int32]topics.HotPartial{}
	err = cl.Read(ctx, topic, from, to, func(r *kgo.Record) error {
		var p topics.HotPartial
		if err := json.Unmarshal(r.Value, &p); err != nil {
			return err
		}
		if byEnd[p.WindowEnd] == nil {
			byEnd[p.WindowEnd] = map[int32]topics.HotPartial{}
		}
		if old, dup := byEnd[p.WindowEnd][p.Partition]; dup && !reflect.DeepEqual(old, p) {
			t.Fatalf("partition %d emitted the window ending %s twice, differently", p.Partition, time.UnixMilli(p.WindowEnd))
		}
		byEnd[p.WindowEnd][p.Partition] = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return byEnd
}

// usersByPartition returns, for each of n partitions, per user names that Kafka's partitioner
// puts there.
func usersByPartition(n, per int) [][]string {
	users := make([][]string, n)
	for i := 0; ; i++ {
		u := fmt.Sprint("u", i)
		if p := kafka.PartitionOf(u, n); len(users[p]) < per {
			users[p] = append(users[p], u)
		} else if done := func() bool {
			for _, us := range users {
				if len(us) < per {
					return false
				}
			}
			return true
		}(); done {
			return users
		}
	}
}

// droppedTotal reads rankstream_hot_dropped_total, summed over its reasons, from the /metrics
// of the process listening on addr; ok is false when the metric is not exported.
func droppedTotal(t *testing.T, addr string) (total float64, ok bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, found := strings.Cut(sc.Text(), " ")
		if !found || !strings.HasPrefix(name, "rankstream_hot_dropped_total{") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		total, ok = total+v, true
	}
	return total, ok
}

// TestHotSearchLongGapInEventTime: a partition whose queries jump thirteen days ahead in event
// time (a producer that was away, or forged its timestamps as far as the decoders' bound
// against the record timestamp and the broker's message.timestamp.after.max.ms allow) emits at
// most (window + lookahead) / slide + 1 windows for the jump (the ones past the reach of its
// events are empty and skipped), not one per slide of the gap (about 225,000), and drops
// nothing. A query dated in the year 9999 cannot get this far: the real broker refuses such a
// record timestamp and the decoders refuse such a time against any other (see
// processors/hostile_test.go).
func TestHotSearchLongGapInEventTime(t *testing.T) {
	t.Parallel()
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		run := startOnePartition(t, brokers, "hotfar")
		kc, proc, cl, rdb, metrics, topic := run.kc, run.proc, run.cl, run.rdb, run.metrics, run.topic
		send := func(ts time.Time) {
			v := searchQuery("q", ts.UnixMilli(), "u")
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte("u"), Value: v, Timestamp: ts}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Now()
		t0 := now.Add(-13 * 24 * time.Hour).Truncate(time.Minute)
		for s := range 60 {
			send(t0.Add(time.Duration(s) * time.Second))
		}
		send(now)
		testenv.WaitFor(t, 2*time.Minute, "a snapshot of the last minute", func() bool {
			if err := proc.Exited(); err != nil {
				t.Fatalf("processor %v\n%s", err, proc.Output())
			}
			return latestSnapshot(t, ctx, rdb).WindowEnd.After(now.Add(-time.Minute))
		})
		windows := len(readPartials(t, ctx, kc))
		cfg := hot.DefaultConfig()
		if most := int((cfg.Window+cfg.Lookahead)/cfg.Slide) + 1 + int(time.Minute/cfg.Slide) + 1; windows > most {
			t.Fatalf("%d windows emitted, want at most %d", windows, most)
		}
		if dropped, ok := droppedTotal(t, metrics); !ok || dropped != 0 {
			t.Fatalf("rankstream_hot_dropped_total = %v (exported: %v), want 0", dropped, ok)
		}
		t.Logf("%d windows emitted for a jump of %s", windows, now.Sub(t0).Round(time.Hour))
		stop(t, proc)
	})
}
