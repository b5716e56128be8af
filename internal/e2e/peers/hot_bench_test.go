//go:build peers

package peers

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/loadgen"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/hot"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/topics"
)

// envQueries overrides the number of queries of BenchmarkHotPeers (default
// loadgen.BenchQueries), for quick runs of the harness only.
const envQueries = "RANKSTREAM_PEERS_QUERIES"

// The hot-search defaults of `rankstream process`, which both systems run with.
const (
	hotK     = 100
	slide    = 5 * time.Second
	lateness = 2 * time.Second
)

// peerHistoryKey is the Redis list to which the hot peer appends every window's snapshot.
const peerHistoryKey = "kstreams:hot:search:windows"

// BenchmarkHotPeers runs the hot-search job of `rankstream process` (groups hot and
// hot-merge, defaults: window 1 h, slide 5 s, lateness 2 s, K 100) and of its Kafka Streams
// peer (kstreams-hot/) on the same pre-produced input, the input of BenchmarkHotThroughput
// (loadgen.BenchSearch: 400k queries over 4 minutes of event time), each into a Redis
// database of its own, one after the other. Each is timed from the moment its consumer group
// (hot; the peer's application id) is Stable until its committed offsets cover the input and
// hot:search:latest holds the last window the input lets close.
//
// The input ends with a dozen invalid queries: both must dead-letter them, and only them, with
// the same reasons (as in BenchmarkStepsPeers). Then every window of both is compared: ours from
// hot.partials, merged as group hot-merge merges them (sketch.MergeTopK), the peer's from the
// list it appends every snapshot to. Both must have published the same windows and neither may
// have dropped a query (compareWindows says why); in every window the peer's exact count of
// every term both list must lie within our item's bounds, and our items from the top down, as
// long as each has error 0 and a count above the next one's (its rank is proven), must be the
// peer's items at the same ranks with the same counts. Otherwise the benchmark fails. Run it
// once: -benchtime 1x.
//
// Reported per system: queries/s, CPU µs per query (utime+stime of the child over the timed
// span) and peak RSS (VmHWM); and the speedup, rankstream's queries/s over the peer's.
func BenchmarkHotPeers(b *testing.B) {
	n := envCount(b, envQueries, loadgen.BenchQueries)
	jar := peerJar(b, hotProject)
	job := newJob(b, topics.SearchQueries)
	records, lastEnd := hotQueries(b, n, job.kc.Partitions)
	poison := hotPoison(records[len(records)-1].Timestamp)
	records = append(records, poison...)
	job.produce(b, records)
	total := int64(len(records))

	published := func(rdb *goredis.Client) bool {
		raw, err := rdb.Get(context.Background(), rsredis.HotKey(topics.SearchStream)).Bytes()
		var s topics.TopKSnapshot
		return err == nil && s.UnmarshalJSON(raw) == nil && s.WindowEnd.UnixMilli() >= lastEnd
	}
	partials := string(job.kc.Names.Stream(topics.HotPartials))
	var ours, peer map[int64]window
	var letters [][]deadLetter
	var dlqSeen map[int32]int64
	// The runs share the dead-letter topic: each one's letters are those it appended.
	deadLetters := func() {
		end := endOffsets(b, job.adm, job.dlq)
		letters = append(letters, readDeadLetters(b, job.kc.Brokers, job.dlq, dlqSeen, end, int64(len(poison))))
		dlqSeen = end
	}
	results := []result{
		job.rankstream(testenv.Rankstream(b), hot.Group).run(b, job.adm, job.input, total, published, func(*goredis.Client) {
			ours = ourWindows(b, job, partials)
		}),
	}
	deadLetters()
	results = append(results, job.kstreamsHot(jar).run(b, job.adm, job.input, total, published, func(rdb *goredis.Client) {
		peer = peerWindows(b, rdb)
	}))
	deadLetters()
	compared, ranks, bounds, err := compareWindows(ours, peer)
	if err != nil {
		b.Fatalf("rankstream and the Kafka Streams peer disagree: %v", err)
	}
	if diff := diffDeadLetters(letters[0], letters[1]); diff != "" {
		b.Fatalf("dead letters differ between rankstream and the Kafka Streams peer: %s", diff)
	}
	b.Logf("%d windows of each compared (the last ending %s): %d ranks proven exact in ours and equal in the peer's, %d counts of the peer's within our bounds; %d dead letters each",
		compared, time.UnixMilli(lastEnd).UTC().Format(time.RFC3339), ranks, bounds, len(letters[0]))
	for _, r := range results {
		b.Logf("%-10s %9.0f queries/s %6.1f CPU µs/query %6.0f MiB peak RSS (%d queries in %s, after %s of start-up)",
			r.name, r.rate(), r.cpuPerRecord(), r.peakMiB(), r.records, r.elapsed.Round(time.Millisecond), r.startup.Round(time.Millisecond))
		b.ReportMetric(r.rate(), r.name+"-queries/s")
		b.ReportMetric(r.cpuPerRecord(), r.name+"-cpu-µs/query")
		b.ReportMetric(r.peakMiB(), r.name+"-peak-RSS-MiB")
	}
	b.ReportMetric(results[0].rate()/results[1].rate(), "speedup")
	b.ReportMetric(float64(compared), "windows")
}

// hotQueries returns the n queries of BenchmarkHotThroughput (loadgen.BenchSearch, the i-th
// dated start + i × BenchSpan / n) and the end of the last window they let close: the newest
// event time of the slowest of the partitions input partitions, less the lateness, rounded
// down to the slide.
func hotQueries(t testing.TB, n, partitions int) ([]*kgo.Record, int64) {
	start := time.Now().Add(-time.Hour).Truncate(time.Minute)
	gen, err := loadgen.BenchSearch(start, loadgen.BenchSpan)
	if err != nil {
		t.Fatal(err)
	}
	newest := make([]int64, partitions)
	out := make([]*kgo.Record, 0, n)
	for i := range n {
		ts := start.Add(time.Duration(i) * loadgen.BenchSpan / time.Duration(n))
		for _, r := range gen.Next(ts) {
			out = append(out, &kgo.Record{Key: []byte(r.Key), Value: r.Value, Timestamp: r.Time})
			part := kafka.PartitionOf(r.Key, partitions)
			newest[part] = max(newest[part], ts.UnixMilli())
		}
	}
	slideMs := slide.Milliseconds()
	return out, (slices.Min(newest) - lateness.Milliseconds()) / slideMs * slideMs
}

// hotPoison returns invalid queries of many kinds, dated (record and event time) at, the
// newest query's time, so that they close no window.
func hotPoison(at time.Time) []*kgo.Record {
	ms := strconv.FormatInt(at.UnixMilli(), 10)
	rec := func(key, value string) *kgo.Record {
		r := &kgo.Record{Key: []byte(key), Timestamp: at}
		if value != "-" {
			r.Value = []byte(value)
		}
		return r
	}
	return []*kgo.Record{
		rec("p1", "-"),
		rec("p2", `not json`),
		rec("p3", `{"query":"a"}`),
		rec("p4", `{"query":"","ts":`+ms+`}`),
		rec("p5", `{"query":"   ","ts":`+ms+`}`),
		rec("p6", `{"query":"a\u0000b","ts":`+ms+`}`),
		rec("p7", `{"query":"`+strings.Repeat("x", 257)+`","ts":`+ms+`}`),
		rec("p8", `{"query":"a","ts":`+ms+`,"user_id":"u:1"}`),
		rec("p9", `{"query":"a","ts":`+strconv.FormatInt(at.Add(10*time.Minute).UnixMilli(), 10)+`}`),
		rec("p10", `{"query":1,"ts":`+ms+`}`),
		rec("p11", `{"query":"a","ts":"yesterday"}`),
		rec(strings.Repeat("k", 129), `{"query":"a","ts":`+ms+`}`),
	}
}

// kstreamsHot is the Kafka Streams hot-search peer on the job's topics.
func (j *job) kstreamsHot(jar string) system {
	app := j.prefix + "kstreams-hot"
	return system{name: "kstreams", group: app, command: func(redisURL, stateDir string) []string {
		args := append([]string{"java"}, javaOpts()...)
		args = append(args, "-jar", jar, "--brokers", strings.Join(j.kc.Brokers, ","), "--redis", redisURL,
			"--input", j.input, "--dlq", j.dlq, "--input-partitions", strconv.Itoa(j.kc.Partitions),
			"--application-id", app, "--state-dir", stateDir, "--history-key", peerHistoryKey)
		if n := os.Getenv(envThreads); n != "" {
			args = append(args, "--threads", n)
		}
		return args
	}}
}

// window is one window's Top-K as a system published it.
type window struct {
	items   []sketch.Item
	dropped uint64
}

// ourWindows reads every partial of hot.partials and merges each window's as group hot-merge
// does; a window must have a partial of every partition (one sent again replaces the first).
func ourWindows(t testing.TB, j *job, topic string) map[int64]window {
	byEnd := map[int64]map[int32]*topics.HotPartial{}
	readTopic(t, j.kc.Brokers, topic, nil, endOffsets(t, j.adm, topic), -1, func(r *kgo.Record) {
		v, err := topics.HotPartialCodec{}.Decode(r.Value)
		if err != nil {
			t.Fatalf("%s offset %d: %v", topic, r.Offset, err)
		}
		p := v.(*topics.HotPartial)
		if byEnd[p.WindowEnd] == nil {
			byEnd[p.WindowEnd] = map[int32]*topics.HotPartial{}
		}
		byEnd[p.WindowEnd][p.Partition] = p
	})
	out := map[int64]window{}
	for end, ps := range byEnd {
		if len(ps) != j.kc.Partitions {
			t.Fatalf("rankstream: the window ending %s has partials of %d of %d partitions", time.UnixMilli(end).UTC(), len(ps), j.kc.Partitions)
		}
		var w window
		var lists [][]sketch.Item
		for _, p := range ps {
			lists = append(lists, p.SketchItems())
			w.dropped += p.Dropped
		}
		w.items = sketch.MergeTopK(hotK, lists...)
		out[end] = w
	}
	return out
}

// peerWindows reads the peer's snapshots, in our JSON form, from its list; a window published
// twice must be the same.
func peerWindows(t testing.TB, rdb *goredis.Client) map[int64]window {
	raw, err := rdb.LRange(context.Background(), peerHistoryKey, 0, -1).Result()
	if err != nil {
		t.Fatalf("LRANGE %s: %v", peerHistoryKey, err)
	}
	out := map[int64]window{}
	for _, r := range raw {
		var s topics.TopKSnapshot
		if err := s.UnmarshalJSON([]byte(r)); err != nil {
			t.Fatalf("the peer's snapshot %q: %v", r, err)
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("the peer's snapshot %q: %v", r, err)
		}
		w := window{dropped: s.Dropped}
		for _, it := range s.Items {
			w.items = append(w.items, sketch.Item{Item: it.Item, Count: it.Count, Error: it.Error})
		}
		end := s.WindowEnd.UnixMilli()
		if old, ok := out[end]; ok && (old.dropped != w.dropped || !slices.Equal(old.items, w.items)) {
			t.Fatalf("the peer published the window ending %s twice, differently", s.WindowEnd)
		}
		out[end] = w
	}
	return out
}

// compareWindows checks the peer's windows against ours (BenchmarkHotPeers says what must
// hold) and returns how many windows it compared, how many ranks it found proven exact in ours
// and equal in the peer's, and how many of the peer's counts it checked against our bounds.
//
// A drop on either side fails it: a snapshot's dropped counts the queries dropped since the
// window before it, and those are missing from every window that spans their time, the ones
// published before as well as after, so a run that dropped one query has no window proven
// exact. On this input, in order within each input partition, no query is late.
func compareWindows(ours, peer map[int64]window) (windows, ranks, bounds int, err error) {
	oursEnds, peerEnds := slices.Sorted(maps.Keys(ours)), slices.Sorted(maps.Keys(peer))
	if !slices.Equal(oursEnds, peerEnds) {
		return 0, 0, 0, fmt.Errorf("windows: rankstream published %d (%s), the peer %d (%s)",
			len(oursEnds), spanOf(oursEnds), len(peerEnds), spanOf(peerEnds))
	}
	if len(oursEnds) == 0 {
		return 0, 0, 0, fmt.Errorf("no window to compare")
	}
	if err := noDrops("rankstream", ours, oursEnds); err != nil {
		return 0, 0, 0, err
	}
	if err := noDrops("the peer", peer, oursEnds); err != nil {
		return 0, 0, 0, err
	}
	for _, end := range oursEnds {
		o, p := ours[end], peer[end]
		at := time.UnixMilli(end).UTC().Format(time.RFC3339)
		windows++
		exact := map[string]uint64{}
		for _, it := range p.items {
			if it.Error != 0 {
				return 0, 0, 0, fmt.Errorf("window ending %s: the peer's %q has error %d", at, it.Item, it.Error)
			}
			exact[it.Item] = it.Count
		}
		for _, it := range o.items {
			if c, ok := exact[it.Item]; ok {
				bounds++
				if c > it.Count || c < it.Count-it.Error {
					return 0, 0, 0, fmt.Errorf("window ending %s: %q counted %d by the peer, outside our bounds [%d, %d]",
						at, it.Item, c, it.Count-it.Error, it.Count)
				}
			}
		}
		for i, it := range o.items {
			if it.Error != 0 || i+1 >= len(o.items) || it.Count <= o.items[i+1].Count {
				break
			}
			if i >= len(p.items) {
				return 0, 0, 0, fmt.Errorf("window ending %s: rank %d is %q (%d, proven) in ours, missing in the peer's", at, i+1, it.Item, it.Count)
			}
			if q := p.items[i]; q.Item != it.Item || q.Count != it.Count {
				return 0, 0, 0, fmt.Errorf("window ending %s: rank %d is %q (%d, proven) in ours, %q (%d) in the peer's", at, i+1, it.Item, it.Count, q.Item, q.Count)
			}
			ranks++
		}
	}
	return windows, ranks, bounds, nil
}

// noDrops returns an error naming the system when any of its windows (ends, in order) counts
// dropped queries.
func noDrops(system string, ws map[int64]window, ends []int64) error {
	var total uint64
	var first int64
	for _, end := range ends {
		if d := ws[end].dropped; d != 0 {
			if total == 0 {
				first = end
			}
			total += d
		}
	}
	if total != 0 {
		return fmt.Errorf("%s dropped %d queries as late (the first in the window ending %s): no window is exact",
			system, total, time.UnixMilli(first).UTC().Format(time.RFC3339))
	}
	return nil
}

func spanOf(ends []int64) string {
	if len(ends) == 0 {
		return "none"
	}
	return time.UnixMilli(ends[0]).UTC().Format(time.RFC3339) + " to " + time.UnixMilli(ends[len(ends)-1]).UTC().Format(time.RFC3339)
}
