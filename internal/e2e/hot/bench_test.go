package hote2e

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/lovoo/goka"
	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sync/errgroup"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/app"
	"github.com/rankstream/rankstream/internal/service/loadgen"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/hot"
	"github.com/rankstream/rankstream/processors/hot/history"
	"github.com/rankstream/rankstream/processors/hot/merge"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// BenchmarkHotThroughput measures, on the real broker, redis-server and clickhouse-server,
// queries per second through the whole hot-search path (search.queries → group hot → loop
// topic → sketch windows → hot.partials → group hot-merge → topk_history and
// hot:search:latest), beside the raw franz-go consume rate of the same topic and goka's own
// ceiling (a processor of the same topic with an empty callback; goka-ratio is the pipeline's
// rate over it; goka-noop-cpu-us/record its CPU per record, group start-up included, steadier
// than its rate on a loaded machine). The queries are produced first, 4 minutes of event time (48 windows to close
// and publish); the pipeline then catches up with that backlog, timed from the hot group's
// first callback until it is done as a user sees it (waitDone): its committed offsets cover
// every query, Redis holds the snapshot of the last window the data lets close, and
// ClickHouse's history every window up to it; cpu-us/query is this process's CPU time over the
// same interval per query; tail-ms is how long the end took after the hot group's callback of
// the last input record (commits, the last windows' way through the merge to the stores, and
// waitDone's own polling). input-queries/s is the rate from the hot group's first callback to
// its callback of the last input record, counted as goka-noop/s is (from the first to the n-th
// record), and input-goka-ratio its ratio to goka-noop/s: the routing of the input alone,
// without the end (tail-ms) that goka-ratio includes. cores is the CPU time of cpu-us/query
// over its wall time (from the groups' start until done): the cores this process used. The
// servers share the machine: with RANKSTREAM_SERVERS_DIR naming the folder of
// deploy/local/servers.sh's servers (make bench sets it), their CPU time over the same
// interval is reported per query too (kafka-cpu-us/query, redis-cpu-us/query,
// clickhouse-cpu-us/query; in clock ticks of 10 ms), and the broker's over the empty
// processor's run per record (goka-noop-kafka-cpu-us/record). Run it once: -benchtime 1x.
// With RANKSTREAM_HOT_PROFILE=<folder> set, the timed part's CPU profile, block profile
// (every blocking event), mutex profile and execution trace are saved there (hot.cpu.pprof,
// hot.block.pprof, hot.mutex.pprof, hot.trace): where the time goes and where the goroutines
// wait; and the allocation profile
// at its start and end (hot.allocs.base.pprof, hot.allocs.pprof: `go tool pprof
// -sample_index=alloc_space -base hot.allocs.base.pprof hot.allocs.pprof` is what it
// allocated).
func BenchmarkHotThroughput(b *testing.B) {
	const n, span = loadgen.BenchQueries, loadgen.BenchSpan
	p := newHotPipeline(b, hot.Config{}) // the defaults: window 1 h, slide 5 s, lateness 2 s
	gen := newSearchGen(b, time.Now().Add(-time.Hour).Truncate(time.Minute), span)
	newest := make([]int64, p.kc.Partitions) // per input partition, its latest event time
	first := make([]int64, p.kc.Partitions)  // and its first (0: none yet)
	i := 0
	p.produce(context.Background(), loadgen.ProduceConfig{Count: n}, func(time.Time) []loadgen.Record {
		ts := gen.start.Add(time.Duration(i) * span / n)
		i++
		recs := gen.Next(ts)
		for _, r := range recs {
			part := kafka.PartitionOf(r.Key, p.kc.Partitions)
			newest[part] = max(newest[part], ts.UnixMilli())
			if first[part] == 0 {
				first[part] = ts.UnixMilli()
			}
		}
		return recs
	})
	// The windows close up to the slowest input partition's newest event less the lateness;
	// the first ends at the first slide boundary not before any input partition's first event.
	slideMs, lateMs := p.cfg.Slide.Milliseconds(), p.cfg.Lateness.Milliseconds()
	lastEnd := (slices.Min(newest) - lateMs) / slideMs * slideMs
	firstEnd := (slices.Max(first) + slideMs - 1) / slideMs * slideMs

	lastOffset := p.lastOffsets()
	var began, lastIn atomic.Int64 // UnixNano of the hot group's first callback, and of its last input record's
	b.ResetTimer()
	cpu0, servers0, t0 := processCPU(b), testenv.ServersCPU(), time.Now()
	stopProfile := profileHot(b)
	p.start(func(ctx goka.Context) {
		if began.Load() == 0 {
			began.CompareAndSwap(0, time.Now().UnixNano())
		}
		if ctx.Offset() == lastOffset[ctx.Partition()] && string(ctx.Topic()) == p.topic {
			now := time.Now().UnixNano()
			for last := lastIn.Load(); last < now && !lastIn.CompareAndSwap(last, now); last = lastIn.Load() {
			}
		}
	})
	done := p.waitDone(n, firstEnd, lastEnd, func() bool { return lastIn.Load() != 0 }, 5*time.Minute)
	path := float64(n) / done.Sub(time.Unix(0, began.Load())).Seconds()
	input := float64(n-1) / time.Unix(0, lastIn.Load()).Sub(time.Unix(0, began.Load())).Seconds()
	tail := done.Sub(time.Unix(0, lastIn.Load()))
	cpu, servers := processCPU(b)-cpu0, testenv.ServersCPU()
	b.StopTimer()
	stopProfile()
	// A sanity check, not a proof (TestHotSearchSnapshotsAreExact is): the last snapshot is
	// full and holds the planted trend.
	if s, _ := p.latest(); len(s.Items) != 100 || !slices.ContainsFunc(s.Items, func(it topics.TopKItem) bool { return it.Item == "black friday" }) {
		b.Fatalf("the last snapshot holds %d items, without the planted trend or with it: %+v", len(s.Items), s.Items)
	}

	raw := testenv.RawConsumeRate(b, p.kc.Brokers, p.topic, n)
	noop := goka.Group(p.kc.Names.Prefix + "noop")
	cpu0, noopServers0 := processCPU(b), testenv.ServersCPU()
	ceiling := testenv.GokaNoopRate(b, p.kc.Brokers, noop, p.topic, n, p.kc.ProcessorOptions(noop, slog.New(slog.DiscardHandler))...)
	noopCPU, noopServers := processCPU(b)-cpu0, testenv.ServersCPU()
	b.ReportMetric(path, "queries/s")
	b.ReportMetric(raw, "raw-consume/s")
	b.ReportMetric(path/raw, "ratio")
	b.ReportMetric(ceiling, "goka-noop/s")
	b.ReportMetric(path/ceiling, "goka-ratio")
	b.ReportMetric(input, "input-queries/s")
	b.ReportMetric(input/ceiling, "input-goka-ratio")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/n, "cpu-us/query")
	b.ReportMetric(float64(tail.Milliseconds()), "tail-ms")
	b.ReportMetric(float64(noopCPU.Nanoseconds())/1e3/n, "goka-noop-cpu-us/record")
	b.ReportMetric(cpu.Seconds()/done.Sub(t0).Seconds(), "cores")
	for name, end := range servers {
		if start, ok := servers0[name]; ok {
			b.ReportMetric(float64((end-start).Nanoseconds())/1e3/n, name+"-cpu-us/query")
		}
	}
	start, ok0 := noopServers0["kafka"]
	if end, ok := noopServers["kafka"]; ok0 && ok {
		b.ReportMetric(float64((end-start).Nanoseconds())/1e3/n, "goka-noop-kafka-cpu-us/record")
	}
}

// profileHot starts the profiles BenchmarkHotThroughput saves when RANKSTREAM_HOT_PROFILE names
// a folder; the returned function stops and saves them.
func profileHot(b *testing.B) (stop func()) {
	dir := os.Getenv("RANKSTREAM_HOT_PROFILE")
	if dir == "" {
		return func() {}
	}
	create := func(name string) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			b.Fatal(err)
		}
		return f
	}
	writeProfile := func(profile, name string) {
		f := create(name)
		if err := pprof.Lookup(profile).WriteTo(f, 0); err != nil {
			b.Error(err)
		}
		f.Close()
	}
	writeProfile("allocs", "hot.allocs.base.pprof")
	cpu, tr := create("hot.cpu.pprof"), create("hot.trace")
	if err := pprof.StartCPUProfile(cpu); err != nil {
		b.Fatal(err)
	}
	if err := trace.Start(tr); err != nil {
		b.Fatal(err)
	}
	runtime.SetBlockProfileRate(1)
	runtime.SetMutexProfileFraction(1)
	return func() {
		pprof.StopCPUProfile()
		trace.Stop()
		for _, name := range []string{"block", "mutex", "allocs"} {
			writeProfile(name, "hot."+name+".pprof")
		}
		runtime.SetBlockProfileRate(0)
		runtime.SetMutexProfileFraction(0)
		for _, f := range []*os.File{cpu, tr} {
			if err := f.Close(); err != nil {
				b.Error(err)
			}
		}
	}
}

// processCPU is the CPU time (user and system) this process has used so far. Per query, it is
// steadier than a rate on a machine shared with other work; it leaves out the servers' CPU.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHotFreshness measures how soon a snapshot is readable: a producer sends queries at
// a steady rate with event time = now while the pipeline runs live (window 1 min, slide 5 s,
// lateness 2 s), and for each of the 18 windows closed in the measured 90 s the freshness is
// the wall-clock time at which Redis first holds its snapshot (or a later one) less the
// window's end. Redis is polled every 20 ms, independently of the publisher, so a figure
// includes the Redis write itself and overstates by at most the poll interval. The lateness is
// part of the freshness by design: a window cannot close before its end plus the lateness.
// With 18 windows the p99 is the largest. Run it once: -benchtime 1x.
func BenchmarkHotFreshness(b *testing.B) {
	const rate, measured, poll = 5_000, 90 * time.Second, 20 * time.Millisecond
	p := newHotPipeline(b, hot.Config{Window: time.Minute, Slide: 5 * time.Second})
	gen := newSearchGen(b, time.Now(), 2*time.Minute)
	p.start()
	ctx, cancel := context.WithCancel(context.Background())
	produced := make(chan error, 1)
	go func() { produced <- p.produceErr(ctx, loadgen.ProduceConfig{Rate: rate}, gen.Next) }()
	defer func() {
		cancel()
		if err := <-produced; err != nil {
			b.Errorf("producer: %v", err)
		}
	}()

	// The first snapshot ends the warm-up (group start-up, the first windows, which input
	// partitions joined late do not describe); the windows after it are measured.
	startEnd := p.waitPublished(1, 2*time.Minute)
	slide := p.cfg.Slide.Milliseconds()
	want := int(measured.Milliseconds() / slide)
	var fresh []float64 // ms
	skipped := 0
	b.ResetTimer()
	last := startEnd
	deadline := time.Now().Add(measured + time.Minute)
	for len(fresh) < want {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d windows published in %s", len(fresh), want, measured+time.Minute)
		}
		p.checkRunning()
		time.Sleep(poll)
		end, ok := p.latestEnd()
		if !ok || end <= last {
			continue
		}
		now := time.Now().UnixMilli()
		for w := last + slide; w <= end && len(fresh) < want; w += slide {
			fresh = append(fresh, float64(now-w))
			if w < end {
				skipped++ // a later window was seen first: this one was published late or never
			}
		}
		last = end
	}
	b.StopTimer()
	slices.Sort(fresh)
	b.ReportMetric(percentile(fresh, 0.50), "fresh-p50-ms")
	b.ReportMetric(percentile(fresh, 0.99), "fresh-p99-ms")
	b.ReportMetric(float64(len(fresh)), "windows")
	b.ReportMetric(float64(skipped), "skipped")
}

// percentile is the nearest-rank q-quantile of sorted values.
func percentile(sorted []float64, q float64) float64 {
	return sorted[max(0, int(math.Ceil(q*float64(len(sorted))))-1)]
}

// searchGen is the benchmarks' search stream (loadgen.BenchSearch) from start.
type searchGen struct {
	*loadgen.Search
	start time.Time
}

func newSearchGen(b *testing.B, start time.Time, span time.Duration) searchGen {
	gen, err := loadgen.BenchSearch(start, span)
	if err != nil {
		b.Fatal(err)
	}
	return searchGen{gen, start}
}

// hotPipeline is the hot-search pipeline of one benchmark, run in this process as
// `rankstream process --history` runs it, on fresh topics under a unique prefix, a Redis
// database and a ClickHouse database of its own.
type hotPipeline struct {
	b       *testing.B
	kc      kafka.Config
	kcl     *kafka.Client // the Kafka client of the pipeline, as a process has one
	cfg     hot.Config
	rdb     *goredis.Client
	history *rsclickhouse.Sink
	ch      driver.Conn // the history's database, chDB, read back
	chDB    string
	topic   string        // search.queries
	logs    *gatedWriter  // the pipeline's warnings, to the benchmark's output
	stopped chan struct{} // closed when the pipeline ended (err says why)
	err     error
}

// gatedWriter passes writes on until it is closed, then drops them: warnings about work cut
// short by the benchmark's end are not news.
type gatedWriter struct {
	w      io.Writer
	closed atomic.Bool
}

func (g *gatedWriter) Write(b []byte) (int, error) {
	if g.closed.Load() {
		return len(b), nil
	}
	return g.w.Write(b)
}

func newHotPipeline(b *testing.B, cfg hot.Config) *hotPipeline {
	brokers := testenv.KafkaBrokers(b)
	rdb := testenv.Redis(b)
	kc := kafka.Config{Brokers: brokers, Partitions: 8, Names: topics.Names{Prefix: testenv.UniqueName(b, "hotbench") + "."}}
	kcl := e2e.KafkaClient(b, kc)
	h := e2e.NewHistory(b)
	ch, chDB, history := h.Conn, h.Database, h.Sink
	// The defaults of `rankstream process` (cmd/rankstream/hot.go), unless cfg sets them.
	cfg.Names, cfg.Partitions = kc.Names, kc.Partitions
	cfg.Slide = cmp.Or(cfg.Slide, 5*time.Second)
	cfg.Lateness = cmp.Or(cfg.Lateness, 2*time.Second)
	// Warnings go to the benchmark's log, printed after its results (benchstat skips them).
	logs := &gatedWriter{w: b.Output()}
	cfg.Log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return &hotPipeline{b: b, kc: kc, kcl: kcl, cfg: cfg, rdb: rdb, history: history, ch: ch, chDB: chDB, logs: logs,
		topic: string(kc.Names.Stream(topics.SearchQueries))}
}

// produce sends what next generates to search.queries (see loadgen.Produce), failing the
// benchmark on an error.
func (p *hotPipeline) produce(ctx context.Context, pc loadgen.ProduceConfig, next func(time.Time) []loadgen.Record) {
	if err := p.produceErr(ctx, pc, next); err != nil {
		p.b.Fatal(err)
	}
}

// produceErr is produce for a goroutine other than the benchmark's.
func (p *hotPipeline) produceErr(ctx context.Context, pc loadgen.ProduceConfig, next func(time.Time) []loadgen.Record) error {
	cl, err := p.kc.KgoClient(kgo.ProducerBatchMaxBytes(2<<20), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	pc.Topic = p.topic
	_, err = loadgen.Produce(ctx, cl, pc, next, p.cfg.Log)
	return err
}

// start runs the hot group (hotHooks run before each of its callbacks) and the merge group, publishing
// to Redis and, through hot.history and its writer, ClickHouse, as `rankstream process
// --history` does, until the benchmark ends.
func (p *hotPipeline) start(hotHooks ...func(goka.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	pub := app.Publisher{Redis: rsredis.NewHotWriter(p.rdb), History: history.NewQueue(p.kcl)}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return history.Run(gctx, p.kc, app.History{Sink: p.history}, p.cfg.Log)
	})
	g.Go(func() error {
		return hot.Run(gctx, p.cfg, p.kcl, p.kc.ProcessorOptions(p.kc.Names.Group(hot.Group), p.cfg.Log, hotHooks...)...)
	})
	g.Go(func() error {
		mcfg := merge.Config{Names: p.cfg.Names, Partitions: p.cfg.Partitions, K: p.cfg.K, Log: p.cfg.Log}
		return merge.Run(gctx, mcfg, pub, p.kc.Brokers, p.kc.ProcessorOptions(p.kc.Names.Group(merge.Group), p.cfg.Log)...)
	})
	p.stopped = make(chan struct{})
	go func() {
		p.err = g.Wait()
		close(p.stopped)
	}()
	p.b.Cleanup(func() {
		p.logs.closed.Store(true)
		cancel()
		<-p.stopped
		if p.err != nil && !errors.Is(p.err, context.Canceled) {
			p.b.Errorf("hot pipeline: %v", p.err)
		}
	})
}

// checkRunning fails the benchmark if the pipeline has ended.
func (p *hotPipeline) checkRunning() {
	select {
	case <-p.stopped:
		p.b.Fatalf("hot pipeline stopped: %v", p.err)
	default:
	}
}

// latest returns the snapshot in hot:search:latest, if there is one.
func (p *hotPipeline) latest() (topics.TopKSnapshot, bool) {
	var s topics.TopKSnapshot
	raw, err := p.rdb.Get(context.Background(), rsredis.HotKey(topics.SearchStream)).Bytes()
	if err != nil {
		return s, false
	}
	if err := s.UnmarshalJSON(raw); err != nil {
		p.b.Fatalf("hot:search:latest: %v", err)
	}
	return s, true
}

// latestEnd returns the window end (Unix ms) of the snapshot in hot:search:latest.
func (p *hotPipeline) latestEnd() (int64, bool) {
	s, ok := p.latest()
	return s.WindowEnd.UnixMilli(), ok
}

// waitPublished waits until Redis holds the snapshot of a window ending at endMs or later and
// returns that window's end.
func (p *hotPipeline) waitPublished(endMs int64, timeout time.Duration) int64 {
	var got int64
	testenv.WaitFor(p.b, timeout, "the snapshot of the window ending "+time.UnixMilli(endMs).UTC().String(), func() bool {
		p.checkRunning()
		end, ok := p.latestEnd()
		got = end
		return ok && end >= endMs
	})
	return got
}

// waitDone waits until the pipeline is done with n queries as a user sees it, and returns when
// it saw that: the hot group committed them all (every query counted for good), Redis holds
// the snapshot of the window ending at lastEnd (Unix ms) or a later one, and ClickHouse's
// topk_history every window from firstEnd to lastEnd. It checks every 10 ms, so that the
// check adds little to a run of about a second, each condition until it holds (they stay
// true), ClickHouse last. It starts checking once read returns true (the hot group's callback
// of the last record of an input partition ran: nothing can be done before), so that its
// requests to the broker do not take the machine's CPU from the pipeline while it reads.
func (p *hotPipeline) waitDone(n, firstEnd, lastEnd int64, read func() bool, timeout time.Duration) time.Time {
	adm := testenv.KafkaAdmin(p.b, p.kc.Brokers)
	group, slide := string(p.kc.Names.Group(hot.Group)), p.cfg.Slide.Milliseconds()
	windows := uint64((lastEnd-firstEnd)/slide + 1)
	var committed, published bool
	var inHistory uint64
	query := "SELECT count(DISTINCT window_end) FROM " + p.chDB + ".topk_history WHERE stream = ? AND window_end >= ? AND window_end <= ?"
	for deadline := time.Now().Add(timeout); ; time.Sleep(10 * time.Millisecond) {
		p.checkRunning()
		if time.Now().After(deadline) {
			p.b.Fatalf("after %s: hot group committed all %d queries %v, Redis holds the window ending %s %v, ClickHouse %d of its %d windows",
				timeout, n, committed, time.UnixMilli(lastEnd).UTC(), published, inHistory, windows)
		}
		if !read() || !committed && testenv.Committed(adm, group, p.topic) < n {
			continue
		}
		committed = true
		if !published {
			if end, ok := p.latestEnd(); !ok || end < lastEnd {
				continue
			}
			published = true
		}
		err := p.ch.QueryRow(context.Background(), query, topics.SearchStream, time.UnixMilli(firstEnd), time.UnixMilli(lastEnd)).Scan(&inHistory)
		if err != nil {
			p.b.Fatalf("topk_history: %v", err)
		}
		if inHistory == windows {
			return time.Now()
		}
	}
}

// lastOffsets returns, by partition, the offset of the last record of search.queries (-1: none).
func (p *hotPipeline) lastOffsets() []int64 {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ends, err := p.kcl.Admin().ListEndOffsets(ctx, p.topic)
	if err != nil {
		p.b.Fatal(err)
	}
	last := make([]int64, p.kc.Partitions)
	for i := range last {
		last[i] = -1
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && int(o.Partition) < len(last) {
			last[o.Partition] = o.Offset - 1
		}
	})
	return last
}
