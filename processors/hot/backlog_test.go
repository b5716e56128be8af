package hot_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/kafkaconf"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// TestHotSearchBacklog: a backlog of 30k queries over 90 minutes of event time, processed with
// the default window, slide, lateness, lookahead and idle time, in the shapes a consumer
// catching up meets: the whole input produced before the processor starts, or while it runs;
// one input partition holding all of the first hour (maximal skew between partitions); 1, 3
// and 8 partitions. Every snapshot holds the exact top 10 of its window with honest bounds,
// none misses a partition, every window up to the last one is published, the latest snapshot
// reports no drop, and rankstream_hot_dropped_total is 0 on the process's /metrics.
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
				prefix := testenv.UniqueName(t, "hotlag") + "."
				kc := kafkaconf.Config{Brokers: brokers, Partitions: sh.partitions, Names: topics.Names{Prefix: prefix}}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				if _, err := kc.EnsureTopics(ctx, true); err != nil {
					t.Fatal(err)
				}
				start := time.Now().Add(-3 * time.Hour).Truncate(time.Minute)
				queries := generate(30_000, start, 90*time.Minute)
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
					v, _ := json.Marshal(map[string]any{"query": spell(rng, q.term), "ts": q.ms, "user_id": user})
					recs[i] = &kgo.Record{Topic: topic, Key: []byte(user), Value: v}
					newest[part] = max(newest[part], q.ms)
				}
				slowest := newest[0]
				for _, ms := range newest {
					slowest = min(slowest, ms)
				}
				lastEnd := time.UnixMilli((slowest - 2000) / e2eSlide.Milliseconds() * e2eSlide.Milliseconds())
				cl, err := kc.Client(kgo.ProducerLinger(5 * time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				defer cl.Close()
				produce := func(recs []*kgo.Record) {
					if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
						t.Error(err)
					}
				}

				r := newRun(t, ctx)
				metrics := freeAddr(t)
				args := r.args(brokers, prefix, "--log-level", "warn", "--partitions", strconv.Itoa(sh.partitions), "--http", metrics)
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
				rows := r.waitAll(t, ctx, lastEnd, proc)
				least := 1000 // from the first event's window on
				if sh.skew {
					least = 300 // the first window ends once every partition has begun, an hour in
				}
				checkExact(t, rows, queries, least)
				dropped, ok := droppedTotal(t, metrics)
				if !ok || dropped != 0 {
					t.Fatalf("rankstream_hot_dropped_total = %v (exported: %v), want 0", dropped, ok)
				}
				if latest := r.latest(t, ctx); latest.Dropped != 0 || latest.WindowEnd.Before(lastEnd) {
					t.Fatalf("latest snapshot ends %s with %d dropped, want the window ending %s with none", latest.WindowEnd, latest.Dropped, lastEnd)
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
		prefix := testenv.UniqueName(t, "hotlate") + "."
		kc := kafkaconf.Config{Brokers: brokers, Partitions: 1, Names: topics.Names{Prefix: prefix}}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if _, err := kc.EnsureTopics(ctx, true); err != nil {
			t.Fatal(err)
		}
		redisAddr, redisDB := testenv.RedisAddr(t)
		metrics := freeAddr(t)
		proc := testenv.StartProcess(t, "processor", testenv.Rankstream(t), "process",
			"--brokers", strings.Join(brokers, ","), "--redis", fmt.Sprintf("redis://%s/%d", redisAddr, redisDB),
			"--topic-prefix", prefix, "--partitions", "1", "--http", metrics, "--log-level", "warn")
		cl, err := kc.Client(kgo.ProducerLinger(0))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		rdb := goredis.NewClient(&goredis.Options{Addr: redisAddr, DB: redisDB})
		defer rdb.Close()
		topic := string(kc.Names.Stream(topics.SearchQueries))
		send := func(term string, ts time.Time, n int) {
			recs := make([]*kgo.Record, n)
			for i := range recs {
				v, _ := json.Marshal(map[string]any{"query": term, "ts": ts.UnixMilli(), "user_id": "u"})
				recs[i] = &kgo.Record{Topic: topic, Key: []byte("u"), Value: v}
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		latest := func() (s topics.TopKSnapshot) {
			raw, err := rdb.Get(ctx, "hot:search:latest").Bytes()
			if err == nil {
				err = json.Unmarshal(raw, &s)
			}
			if err != nil && err != goredis.Nil {
				t.Fatal(err)
			}
			return s
		}
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

// usersByPartition returns, for each of n partitions, per user names that Kafka's partitioner
// puts there.
func usersByPartition(n, per int) [][]string {
	users := make([][]string, n)
	for i := 0; ; i++ {
		u := fmt.Sprint("u", i)
		if p := kafkaconf.PartitionOf(u, n); len(users[p]) < per {
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

// freeAddr returns a loopback address with a port free at the time of the call.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
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
