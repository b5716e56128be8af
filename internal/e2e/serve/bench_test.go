package servee2e

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// Sizes and durations of the read benchmarks (a few seconds per measurement).
const (
	members     = 1_000_000
	workers     = 32 // closed-loop clients, through serve and to Redis alike
	closedFor   = 2 * time.Second
	openFor     = 2 * time.Second // vegeta's open-model run
	openRound   = time.Second     // one round of the lean client's and the raw side's (openPair)
	openRounds  = 5
	fixedRate   = 5000 // the score boards' target rate, req/s
	benchPrefix = "rsbench"
)

// read is one kind of board read: its HTTP path through serve (member: a member to rank,
// random per request) and the same Redis commands sent directly through sinks/redis.Reader,
// in-process (the floor: what any client of Redis pays, without HTTP).
type read struct {
	name      string
	cacheable bool // a page within the Top-100: served from the hot-boards cache
	path      func(member string) string
	raw       func(ctx context.Context, r *rsredis.Reader, member string) error
}

// boardReads are the four reads of a board: top-20, top-100, the page at offset 1000, and a
// member's rank with 5 neighbours.
func boardReads(page func(offset, limit int) string, raw func(ctx context.Context, r *rsredis.Reader, offset, limit int) error,
	rank func(member string) string, rawRank func(ctx context.Context, r *rsredis.Reader, member string) error) []read {
	pageRead := func(name string, offset, limit int) read {
		return read{name: name, cacheable: offset+limit <= 100, path: func(string) string { return page(offset, limit) },
			raw: func(ctx context.Context, r *rsredis.Reader, _ string) error { return raw(ctx, r, offset, limit) }}
	}
	return []read{
		pageRead("top20", 0, 20),
		pageRead("top100", 0, 100),
		pageRead("offset1000", 1000, 20),
		{name: "rank5", path: rank, raw: rawRank},
	}
}

// memberID is the id of the i-th member of the benchmark boards.
func memberID(i int) string { return fmt.Sprintf("m%07d", i) }

func randomMember() string { return memberID(rand.IntN(members)) }

// fixture is the boards in Redis and a `rankstream serve` on them.
type fixture struct {
	base string // http://host:port
	// baseNoCache is a second serve with the hot-boards cache off (--board-cache-ttl 0): the
	// read path's own cost on the reads the cache would otherwise answer.
	baseNoCache string
	// old holds, with RANKSTREAM_BENCH_BASE_BIN=<a rankstream binary>, the address of that
	// binary's serve beside each of the two (base and baseNoCache): every read is then measured
	// on both, one after the other, the base's as base:<board>/<read> (a before/after
	// comparison in one run).
	old map[string]string
	// bare is the address of the bare HTTP server (bareHTTP), the floor of any server's HTTP hop.
	bare string
	// procs are the serves and the bare server by base, for their CPU time.
	procs  map[string]*testenv.Process
	rdb    *goredis.Client // for redis-server's CPU time
	reader *rsredis.Reader
	// rawPoolSize is how many connections the raw side's go-redis client holds at most (its
	// default PoolSize): the open model's serve side gets as many (leanPool).
	rawPoolSize int
	day         board.Day
	refs        map[string]rsredis.BoardRef // score boards by name
}

// setup builds a 1M-member steps board of today, 1M-member score boards of one and of 16
// shards (period total), and a hot-search snapshot of 100 items, in a Redis database of the
// benchmark's own, then starts `rankstream serve` with its defaults on it.
func setup(b *testing.B) *fixture {
	b.Helper()
	addr, db := testenv.RedisAddr(b)
	rdb := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
	b.Cleanup(func() {
		// UNLINK frees the boards in the background: a FLUSHDB of 3M members outlasts
		// testenv's cleanup deadline on a loaded machine. (Cleanups run last first.)
		keys, err := rdb.Keys(context.Background(), "*").Result()
		if err == nil && len(keys) > 0 {
			err = rdb.Unlink(context.Background(), keys...).Err()
		}
		if err != nil {
			b.Errorf("unlink the boards: %v", err)
		}
		_ = rdb.Close()
	})
	ctx := context.Background()
	f := &fixture{day: board.DayOf(time.Now(), time.UTC), refs: map[string]rsredis.BoardRef{}}
	start := time.Now()
	fillSteps(b, rdb, f.day)
	for _, shards := range []int{1, 16} {
		name := fmt.Sprintf("%s%d", benchPrefix, shards)
		ref := rsredis.BoardRef{Board: name, Period: board.PeriodTotal, PeriodID: "total", Shards: shards}
		fillScores(b, rdb, ref)
		f.refs[name] = ref
	}
	snap := topics.TopKSnapshot{Stream: topics.SearchStream, WindowStart: time.Now().Add(-time.Hour).Truncate(time.Second),
		WindowEnd: time.Now().Truncate(time.Second), GeneratedAt: time.Now(), Version: time.Now().UnixMilli()}
	for i := range 100 {
		snap.Items = append(snap.Items, topics.TopKItem{Item: fmt.Sprintf("term %d", i), Count: uint64(100_000 - i)})
	}
	if _, err := rsredis.NewHotWriter(rdb).Write(ctx, snap); err != nil {
		b.Fatalf("hot snapshot: %v", err)
	}
	b.Logf("fixture: 3 boards of %d members and a snapshot in %s", members, time.Since(start).Round(time.Second))

	file := filepath.Join(b.TempDir(), "boards.yaml")
	yaml := "boards:\n"
	for name, ref := range f.refs {
		yaml += fmt.Sprintf("  - name: %s\n    periods: [total]\n    tz: UTC\n    retention: 1d\n    shards: %d\n", name, ref.Shards)
	}
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		b.Fatal(err)
	}
	redisURL := fmt.Sprintf("redis://%s/%d", addr, db)
	httpAddr := testenv.FreeAddr(b)
	serve := testenv.StartProcess(b, "serve", testenv.Rankstream(b), "serve", "--redis", redisURL, "--http", httpAddr,
		"--log-level", "warn", "--boards", file)
	noCacheAddr := testenv.FreeAddr(b)
	serveNoCache := testenv.StartProcess(b, "serve-nocache", testenv.Rankstream(b), "serve", "--redis", redisURL, "--http", noCacheAddr,
		"--log-level", "warn", "--boards", file, "--board-cache-ttl", "0")
	f.base, f.baseNoCache = "http://"+httpAddr, "http://"+noCacheAddr
	bareAddr := testenv.FreeAddr(b)
	f.bare = "http://" + bareAddr
	f.procs = map[string]*testenv.Process{f.base: serve, f.baseNoCache: serveNoCache,
		f.bare: testenv.StartProcess(b, "bare-http", os.Args[0], bareHTTPArg, bareAddr)}
	if bin := os.Getenv("RANKSTREAM_BENCH_BASE_BIN"); bin != "" {
		f.old = map[string]string{}
		for i, extra := range [][]string{nil, {"--board-cache-ttl", "0"}} {
			addr := testenv.FreeAddr(b)
			args := append([]string{"serve", "--redis", redisURL, "--http", addr, "--log-level", "warn", "--boards", file}, extra...)
			p := testenv.StartProcess(b, fmt.Sprintf("serve-base%d", i), bin, args...)
			f.old[[]string{f.base, f.baseNoCache}[i]] = "http://" + addr
			f.procs["http://"+addr] = p
		}
	}
	f.rdb = rdb
	for base := range f.procs { // the bare server answers /readyz as any path
		testenv.WaitFor(b, 30*time.Second, "serve ready", func() bool {
			resp, err := http.Get(base + "/readyz")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}
	qdb, err := rsredis.OpenReader(redisURL, time.Second)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = qdb.Close() })
	f.reader = rsredis.NewReader(qdb)
	c, ok := qdb.(*goredis.Client)
	if !ok {
		b.Fatalf("the raw side's client is a %T", qdb)
	}
	f.rawPoolSize = c.Options().PoolSize
	return f
}

// fillSteps writes the steps board of day as the steps writer would (its keys and composite
// scores; ZADD of 10k members per command, which is far faster than the writer's per-user
// script and gives the same board): member i has a random count and reach time in the day.
func fillSteps(b *testing.B, rdb goredis.UniversalClient, day board.Day) {
	c := board.DayComposite(day)
	first := day.FirstInstant().UnixMilli()
	rng := rand.New(rand.NewPCG(1, 2))
	key := rsredis.StepsGlobalBoard(day)
	zs := make([]goredis.Z, 0, 10_000)
	for i := range members {
		v, err := c.Encode(rng.Int64N(50_000), first+rng.Int64N(86_400_000))
		if err != nil {
			b.Fatal(err)
		}
		zs = append(zs, goredis.Z{Score: v, Member: memberID(i)})
		if len(zs) == cap(zs) || i == members-1 {
			if err := rdb.ZAdd(context.Background(), key, zs...).Err(); err != nil {
				b.Fatalf("steps board: %v", err)
			}
			zs = zs[:0]
		}
	}
}

// fillScores writes a score board as the board writer would (sinks/redis.EncodeEntry into each
// shard's sorted set, the entry's prefix into its hash; 10k members per command per shard, far
// faster than the writer's per-entry script, with the same keys and values).
func fillScores(b *testing.B, rdb goredis.UniversalClient, ref rsredis.BoardRef) {
	rng := rand.New(rand.NewPCG(3, uint64(ref.Shards)))
	zs := make([][]goredis.Z, ref.Shards)
	hs := make([][]any, ref.Shards)
	flush := func(shard int) {
		pipe := rdb.Pipeline()
		pipe.ZAdd(context.Background(), rsredis.ScoreBoardKey(ref, shard), zs[shard]...)
		pipe.HSet(context.Background(), rsredis.ScoreBoardMembersKey(ref, shard), hs[shard]...)
		if _, err := pipe.Exec(context.Background()); err != nil {
			b.Fatalf("score board %s: %v", ref.Board, err)
		}
		zs[shard], hs[shard] = zs[shard][:0], hs[shard][:0]
	}
	for i := range members {
		m := memberID(i)
		e, err := rsredis.EncodeEntry(m, rng.Int64N(1_000_000), 1_700_000_000_000+rng.Int64N(1e10))
		if err != nil {
			b.Fatal(err)
		}
		shard := rsredis.ShardOf(m, ref.Shards)
		zs[shard] = append(zs[shard], goredis.Z{Member: e})
		hs[shard] = append(hs[shard], m, e[:len(e)-len(m)])
		if len(zs[shard]) == 10_000 {
			flush(shard)
		}
	}
	for shard := range ref.Shards {
		if len(zs[shard]) > 0 {
			flush(shard)
		}
	}
}

// reads lists every read of the benchmark by board.
func (f *fixture) reads() map[string][]read {
	day := f.day.String()
	out := map[string][]read{
		"steps": boardReads(
			func(offset, limit int) string {
				return fmt.Sprintf("/v1/boards/steps?day=%s&offset=%d&limit=%d", day, offset, limit)
			},
			func(ctx context.Context, r *rsredis.Reader, offset, limit int) error {
				_, _, err := r.StepsPage(ctx, f.day, "", offset, limit)
				return err
			},
			func(m string) string { return fmt.Sprintf("/v1/boards/steps/members/%s?day=%s&neighbors=5", m, day) },
			func(ctx context.Context, r *rsredis.Reader, m string) error {
				_, _, err := r.StepsStanding(ctx, f.day, "", m, 5)
				return err
			}),
	}
	for name, ref := range f.refs {
		out[name] = boardReads(
			func(offset, limit int) string {
				return fmt.Sprintf("/v1/boards/%s?period=total&offset=%d&limit=%d", name, offset, limit)
			},
			func(ctx context.Context, r *rsredis.Reader, offset, limit int) error {
				_, _, err := r.BoardPage(ctx, ref, offset, limit)
				return err
			},
			func(m string) string {
				return fmt.Sprintf("/v1/boards/%s/members/%s?period=total&neighbors=5", name, m)
			},
			func(ctx context.Context, r *rsredis.Reader, m string) error {
				_, _, err := r.BoardStanding(ctx, ref, m, 5)
				return err
			})
	}
	out["hot"] = []read{{name: "search",
		path: func(string) string { return "/v1/hot/search?k=10" },
		raw: func(ctx context.Context, r *rsredis.Reader, _ string) error {
			_, err := r.HotSnapshot(ctx, topics.SearchStream)
			return err
		}}}
	return out
}

// httpClient keeps a connection per worker alive.
var httpClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1024, MaxConnsPerHost: 0}}

// get reads one answer of the serve at base and fails on anything but a fresh 200.
func get(base, path string) error {
	resp, err := httpClient.Get(base + path)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	if err == nil && isStale(body) {
		return fmt.Errorf("GET %s: a stale answer", path)
	}
	return err
}

// isStale tells whether an answer of serve is the last good copy instead of a fresh one (Redis
// did not answer within the deadline).
func isStale(body []byte) bool { return strings.Contains(string(body), `"stale":true`) }

// closedLoop runs workers loops of calls back to back for d, each calling the function
// worker returned to it once, and returns the calls per second that succeeded and the
// fraction that failed (an error, a status other than 200, or a stale answer).
func closedLoop(d time.Duration, worker func() func() error) (rate, failed float64) {
	var ok, bad atomic.Int64
	stop := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for range workers {
		do := worker()
		wg.Go(func() {
			for time.Now().Before(stop) {
				if do() != nil {
					bad.Add(1)
				} else {
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return float64(ok.Load()) / time.Since(start).Seconds(), float64(bad.Load()) / float64(max(1, ok.Load()+bad.Load()))
}

// shared is a closed-loop worker factory of one function for every worker.
func shared(do func() error) func() func() error { return func() func() error { return do } }

// leanLoop runs a closed loop of GETs of path() at base, each answered with a status beginning
// with want, through a lean connection of each worker's own (closed at the end), and returns
// the requests per second that succeeded, the fraction that failed and the CPU use (f.cpu).
func (f *fixture) leanLoop(b *testing.B, base string, path func() string, want []byte) (rate, failed float64, use cpuUse) {
	var conns []*leanConn
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	worker := func() func() error {
		c := newLeanConn(base)
		conns = append(conns, c)
		return func() error { return c.getWant(path(), want) }
	}
	use = f.cpu(b, base, func() float64 {
		rate, failed = closedLoop(closedFor, worker)
		return rate
	})
	return rate, failed, use
}

// hopPath is path (a read's, with a query) with its last parameter given twice: serve refuses
// it with a 400 once it has matched the route and parsed the query, before any Redis command
// or answer's encoding. Through it a closed loop measures what the HTTP hop alone costs the
// generator and serve.
func hopPath(path string) string { return path + "&" + path[strings.LastIndexAny(path, "?&")+1:] }

// openServe sends rate requests per second to serve for d with vegeta's attacker (open model:
// a request is sent on schedule whatever the earlier ones do) and returns its metrics.
func openServe(base string, rd read, rate float64, d time.Duration) *vegeta.Metrics {
	targeter := func(t *vegeta.Target) error {
		t.Method, t.URL = http.MethodGet, base+rd.path(randomMember())
		return nil
	}
	atk := vegeta.NewAttacker(vegeta.Workers(workers), vegeta.KeepAlive(true), vegeta.Timeout(10*time.Second))
	var m vegeta.Metrics
	for res := range atk.Attack(targeter, vegeta.ConstantPacer{Freq: int(rate), Per: time.Second}, d, rd.name) {
		if res.Code == http.StatusOK && isStale(res.Body) {
			res.Code, res.Error = 0, "stale answer"
		}
		res.Body = nil
		m.Add(res)
	}
	m.Close()
	return &m
}

// openRaw sends the read's Redis commands rate times per second for d (openPaced), adding
// their results to m.
func (f *fixture) openRaw(m *vegeta.Metrics, rd read, rate float64, d time.Duration) {
	openPaced(m, "raw "+rd.name, rate, d, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return rd.raw(ctx, f.reader, randomMember())
	})
}

// openPair measures the read at rate through serve (through as many lean connections as the
// raw side's go-redis pool holds, opened beforehand: leanPool) and
// as the raw commands (openRaw) in openRounds rounds of openRound each, serve and raw
// alternated, each side's latencies pooled. A pause of the machine (a collection, another
// process's burst) then lands on either side alike, and each side's p99 is over openRounds
// times as many requests as one round's: one 2-second run's p99 moved between runs of the
// same tree by a factor of up to 100.
func (f *fixture) openPair(b *testing.B, base string, rd read, rate float64) (serve, raw *vegeta.Metrics) {
	pool, err := newLeanPool(base, f.rawPoolSize)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.closeAll()
	serve, raw = new(vegeta.Metrics), new(vegeta.Metrics)
	for range openRounds {
		openPaced(serve, "serve "+rd.name, rate, openRound, func() error {
			c := pool.take()
			defer pool.put(c)
			return c.get(rd.path(randomMember()))
		})
		f.openRaw(raw, rd, rate, openRound)
	}
	serve.Close()
	raw.Close()
	return serve, raw
}

// openPaced calls do rate times per second for d, each call on its schedule from a goroutine
// of its own (open model, like vegeta), with the latency counted from when it was due, and
// adds their results to m (m.Close computes its figures).
func openPaced(m *vegeta.Metrics, name string, rate float64, d time.Duration, do func() error) {
	pacer := vegeta.ConstantPacer{Freq: int(rate), Per: time.Second}
	results := make(chan *vegeta.Result, 1024)
	collected := make(chan struct{})
	go func() {
		for r := range results {
			m.Add(r)
		}
		close(collected)
	}()
	var wg sync.WaitGroup
	began := time.Now()
	for hits := uint64(0); ; hits++ {
		elapsed := time.Since(began)
		if elapsed >= d {
			break
		}
		wait, stop := pacer.Pace(elapsed, hits)
		if stop {
			break
		}
		time.Sleep(wait)
		due := began.Add(elapsed + wait)
		wg.Go(func() {
			res := &vegeta.Result{Attack: name, Timestamp: due, Code: http.StatusOK}
			if err := do(); err != nil {
				res.Code, res.Error = 0, err.Error()
			}
			res.Latency = time.Since(due)
			results <- res
		})
	}
	wg.Wait()
	close(results)
	<-collected
}

// reportOpen reports the open-model metrics of serve (through the lean client, and through
// vegeta's net/http client) and of the raw commands at one rate: p50/p99 latency (failures
// included: a failed request counts with the time it took), the p99 ratios to raw, and the
// fraction of requests that failed (errors, statuses other than 200, stale answers).
func reportOpen(b *testing.B, serve, vegetaServe, raw *vegeta.Metrics) {
	b.ReportMetric(ms(serve.Latencies.P50), "serve-p50-ms")
	b.ReportMetric(ms(serve.Latencies.P99), "serve-p99-ms")
	b.ReportMetric(ms(vegetaServe.Latencies.P99), "vegeta-p99-ms")
	b.ReportMetric(ms(raw.Latencies.P50), "raw-p50-ms")
	b.ReportMetric(ms(raw.Latencies.P99), "raw-p99-ms")
	b.ReportMetric(float64(serve.Latencies.P99)/float64(raw.Latencies.P99), "p99-ratio")
	b.ReportMetric(float64(vegetaServe.Latencies.P99)/float64(raw.Latencies.P99), "vegeta-p99-ratio")
	b.ReportMetric(1-serve.Success, "serve-open-failed")
	b.ReportMetric(1-vegetaServe.Success, "vegeta-open-failed")
	b.ReportMetric(1-raw.Success, "raw-open-failed")
}

// cpuUse is the CPU time per request, in µs, of the processes of one closed loop, and the
// machine's busy time per request (testenv.MachineCPU: every process and the kernel's network
// work, which no process is charged) with the cores it kept busy.
type cpuUse struct{ gen, serve, redis, machine, cores float64 }

func (c cpuUse) total() float64 { return c.gen + c.serve + c.redis }

// cpu runs measure (which returns the requests per second it completed) and returns the CPU
// time per request of this process (the generator), of the serve at base (none for "") and of
// redis-server over it: a figure that the other load of a shared machine disturbs far less
// than the requests per second, since the closed loop is bound by the CPU of the three.
func (f *fixture) cpu(b *testing.B, base string, measure func() float64) cpuUse {
	self := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	serve := func() time.Duration {
		if base == "" {
			return 0
		}
		d, err := f.procs[base].CPU()
		if err != nil {
			b.Fatal(err)
		}
		return d
	}
	machine := func() time.Duration {
		busy, _, err := testenv.MachineCPU()
		if err != nil {
			b.Fatal(err)
		}
		return busy
	}
	gen0, serve0, redis0, busy0, start := self(), serve(), testenv.RedisCPU(b, f.rdb), machine(), time.Now()
	rate := measure()
	took := time.Since(start)
	n := rate * took.Seconds()
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / max(n, 1) }
	busy := machine() - busy0
	return cpuUse{gen: us(self() - gen0), serve: us(serve() - serve0), redis: us(testenv.RedisCPU(b, f.rdb) - redis0),
		machine: us(busy), cores: busy.Seconds() / took.Seconds()}
}

// profiled runs measure; with RANKSTREAM_BENCH_PROFILES=dir it also writes the CPU profiles
// of the serve at base (<dir>/<benchmark>.serve.pprof, through its /debug/pprof/profile) and of
// this process, the load generator (<dir>/<benchmark>.gen.pprof), taken while measure runs.
func profiled(b *testing.B, base string, measure func()) {
	dir := os.Getenv("RANKSTREAM_BENCH_PROFILES")
	if dir == "" {
		measure()
		return
	}
	name := filepath.Join(dir, strings.ReplaceAll(b.Name(), "/", "_"))
	gen, err := os.Create(name + ".gen.pprof")
	if err != nil {
		b.Fatal(err)
	}
	defer gen.Close()
	served := make(chan error, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, int(closedFor.Seconds())))
		if err != nil {
			served <- err
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil {
			err = os.WriteFile(name+".serve.pprof", body, 0o644)
		}
		served <- err
	}()
	if err := pprof.StartCPUProfile(gen); err != nil {
		b.Fatal(err)
	}
	measure()
	pprof.StopCPUProfile()
	if err := <-served; err != nil {
		b.Errorf("serve's profile: %v", err)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkReadPath measures every read of every board (steps, score boards of 1 and 16
// shards, 1M members each; hot search) through `rankstream serve` with its defaults, beside
// the same Redis commands sent directly:
//   - closed loop, 32 workers: serve-req/s, raw-req/s and their ratio (goal: >= 0.8). Serve
//     is read through a lean keep-alive HTTP/1.1 client (lean_test.go), the raw commands
//     through go-redis: equally lean clients, since the generator shares the cores with serve
//     and redis-server. nethttp-req/s and nethttp-ratio are the same reads through Go's
//     net/http client (the earlier generator, several times dearer per request);
//   - open model at half the raw max throughput: the lean client paced like the raw commands,
//     in 5 rounds of 1 s alternated with the raw side's (openPair), and vegeta for 2 s: p50/p99
//     of serve and raw, p99-ratio = serve p99 / raw p99 (goal: <= 3), vegeta-p99-ms and
//     vegeta-p99-ratio;
//   - the machine's busy time a request (testenv.MachineCPU: the processes' CPU above plus
//     the kernel's loopback network work, charged to none of them) of serve's and the raw
//     side's closed loops, serve-machine-us/req and raw-machine-us/req, their machine-ratio,
//     and the cores each loop kept busy (serve-cores, raw-cores; 2 is the whole machine);
//   - the HTTP hop alone: a closed loop of the same requests with a parameter given twice,
//     which serve refuses with a 400 before any Redis command (hopPath). hop-cpu-us/req is
//     the CPU of the generator and serve a request (hop-serve-cpu-us/req serve's part),
//     hop-machine-us/req the machine's busy time, and hop-machine-ratio = raw / (raw + hop)
//     of the machine's time a request is the machine-ratio of a serve that would add nothing
//     but that hop to the raw side's work: once the loops keep the cores busy, about the
//     highest ratio a read sending the raw side's commands can reach (a page read can go
//     above it: serve coalesces identical reads). The bare-* figures are the same through the
//     bare server (bareHTTP): the hop's floor for any HTTP server in Go on this machine.
//
// With RANKSTREAM_BENCH_PROFILES=<dir>, the CPU profiles of serve and of the generator during
// each lean closed loop are written there (profiled).
//
// With RANKSTREAM_BENCH_BASE_BIN=<a rankstream binary> (e.g. built from the commit before a
// change), that binary's serves run beside the tree's, and every read is measured on both, one
// after the other: the tree's as <board>/<read>, the other's as base:<board>/<read>.
//
// Pages at most 100 deep are served from the hot-boards cache once a board is read often
// (its default); a member's rank always reads Redis. Those pages are measured again as
// <read>-nocache through a second serve with the cache off (--board-cache-ttl 0). Then
// fixed5k/{top100,rank5}: the score boards' targets on the 1M-member score board of one shard
// at a fixed 5k requests/s (open model), through serve and as the raw commands (targets: top-100 p99 <= 2 ms, rank p99 <= 5 ms).
// Building the boards takes a while, so every measurement runs in one call: -benchtime 1x.
func BenchmarkReadPath(b *testing.B) {
	f := setup(b)
	ctx := context.Background()
	all := f.reads()
	for _, boardName := range []string{"steps", benchPrefix + "1", benchPrefix + "16", "hot"} {
		for _, rd := range all[boardName] {
			names, bases := []string{rd.name}, []string{f.base}
			if rd.cacheable {
				names, bases = append(names, rd.name+"-nocache"), append(bases, f.baseNoCache)
			}
			runs, runBases := []string{}, []string{}
			for i, name := range names {
				runs, runBases = append(runs, boardName+"/"+name), append(runBases, bases[i])
				if old, ok := f.old[bases[i]]; ok {
					runs, runBases = append(runs, "base:"+boardName+"/"+name), append(runBases, old)
				}
			}
			for i, name := range runs {
				base := runBases[i]
				b.Run(name, func(b *testing.B) {
					for range b.N {
						readPath := func() string { return rd.path(randomMember()) }
						var serve, serveFailed float64
						var serveCPU cpuUse
						profiled(b, base, func() { serve, serveFailed, serveCPU = f.leanLoop(b, base, readPath, status200) })
						nethttp, _ := closedLoop(closedFor, shared(func() error { return get(base, readPath()) }))
						var raw, rawFailed float64
						rawCPU := f.cpu(b, "", func() float64 {
							raw, rawFailed = closedLoop(closedFor, shared(func() error { return rd.raw(ctx, f.reader, randomMember()) }))
							return raw
						})
						_, hopFailed, hopCPU := f.leanLoop(b, base, func() string { return hopPath(readPath()) }, status400)
						_, bareFailed, bareCPU := f.leanLoop(b, f.bare, readPath, status200)
						if hopFailed > 0.01 || bareFailed > 0.01 {
							b.Errorf("%.1f%% of the refused requests were not answered 400, %.1f%% of the bare server's failed",
								100*hopFailed, 100*bareFailed)
						}
						b.ReportMetric(serve, "serve-req/s")
						b.ReportMetric(raw, "raw-req/s")
						b.ReportMetric(serve/raw, "ratio")
						b.ReportMetric(nethttp, "nethttp-req/s")
						b.ReportMetric(nethttp/raw, "nethttp-ratio")
						b.ReportMetric(serveFailed, "serve-failed")
						b.ReportMetric(rawFailed, "raw-failed")
						b.ReportMetric(serveCPU.serve, "serve-cpu-us/req")
						b.ReportMetric(serveCPU.total(), "serve-total-cpu-us/req")
						b.ReportMetric(rawCPU.total(), "raw-total-cpu-us/req")
						b.ReportMetric(rawCPU.total()/serveCPU.total(), "cpu-ratio")
						b.ReportMetric(serveCPU.machine, "serve-machine-us/req")
						b.ReportMetric(rawCPU.machine, "raw-machine-us/req")
						b.ReportMetric(rawCPU.machine/serveCPU.machine, "machine-ratio")
						b.ReportMetric(serveCPU.cores, "serve-cores")
						b.ReportMetric(rawCPU.cores, "raw-cores")
						b.ReportMetric(hopCPU.total(), "hop-cpu-us/req")
						b.ReportMetric(hopCPU.serve, "hop-serve-cpu-us/req")
						b.ReportMetric(hopCPU.machine, "hop-machine-us/req")
						b.ReportMetric(rawCPU.machine/(rawCPU.machine+hopCPU.machine), "hop-machine-ratio")
						b.ReportMetric(bareCPU.total(), "bare-cpu-us/req")
						b.ReportMetric(bareCPU.serve, "bare-serve-cpu-us/req")
						b.ReportMetric(bareCPU.machine, "bare-machine-us/req")
						b.ReportMetric(rawCPU.machine/(rawCPU.machine+bareCPU.machine), "bare-machine-ratio")
						rate := raw / 2
						b.ReportMetric(rate, "open-req/s")
						leanOpen, rawOpen := f.openPair(b, base, rd, rate)
						reportOpen(b, leanOpen, openServe(base, rd, rate, openFor), rawOpen)
					}
				})
			}
		}
	}
	for _, rd := range all[benchPrefix+"1"] {
		if rd.name != "top100" && rd.name != "rank5" {
			continue
		}
		b.Run("fixed5k/"+rd.name, func(b *testing.B) {
			for range b.N {
				leanOpen, rawOpen := f.openPair(b, f.base, rd, fixedRate)
				reportOpen(b, leanOpen, openServe(f.base, rd, fixedRate, openFor), rawOpen)
			}
		})
	}
}
