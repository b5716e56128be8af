//go:build peers

package peers

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lovoo/goka"
	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/loadgen"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// Environment of the benchmark.
const (
	// envReports overrides the number of generated reports (default 1,000,000), for quick
	// runs of the harness only: the figures to compare are those of the default.
	envReports = "RANKSTREAM_PEERS_REPORTS"
	// envStepsJar is the Kafka Streams steps peer's jar (default: kstreams-steps/target/).
	envStepsJar = "RANKSTREAM_PEERS_STEPS_JAR"
	// envHotJar is the Kafka Streams hot-search peer's jar (default: kstreams-hot/target/).
	envHotJar = "RANKSTREAM_PEERS_HOT_JAR"
	// envJavaOpts are the JVM flags of the peer, split on spaces (default -Xmx1g).
	envJavaOpts = "RANKSTREAM_PEERS_JAVA_OPTS"
	// envThreads is the peer's num.stream.threads (default: the number of CPUs).
	envThreads = "RANKSTREAM_PEERS_THREADS"
)

// BenchmarkStepsPeers runs the steps job of `rankstream process` and of its Kafka Streams peer
// (kstreams-steps/) on the same pre-produced input (the input of BenchmarkSliceThroughput: 1M
// reports of 200k users, 10% duplicates, 10% stale, plus a few invalid records), each into a
// Redis database of its own, one after the other. Each is timed from the moment its consumer
// group is Stable until its committed offsets cover the whole input (both commit only after
// Redis acknowledged). Then both Redis databases must hold identical step keys, boards (members
// and scores) and expiry times, and both dead-letter sets must be the same records with the
// same reasons; otherwise the benchmark fails. Run it once: -benchtime 1x.
//
// Reported per system: records/s; CPU µs per record of the child process (utime+stime from
// /proc over the timed span); its peak RSS (VmHWM); redis-server CPU µs per record (INFO cpu,
// from the child's start to the end of the timed span).
func BenchmarkStepsPeers(b *testing.B) {
	n := envCount(b, envReports, 1_000_000)
	jar := peerJar(b, stepsProject)
	job := newJob(b, topics.StepsReported)
	records := append(stepReports(n), poison(time.Now())...)
	job.produce(b, records)
	total := int64(len(records))

	results := make([]result, 0, 2)
	var snaps []snapshot
	var letters [][]deadLetter
	var dlqSeen map[int32]int64
	for _, sys := range []system{job.rankstream(testenv.Rankstream(b), topics.StepsGroup), job.kstreams(jar, javaOpts(), "kstreams-steps")} {
		res := sys.run(b, job.adm, job.input, total, nil, func(rdb *goredis.Client) {
			snaps = append(snaps, takeSnapshot(b, rdb))
		})
		results = append(results, res)
		// The runs share the dead-letter topic: each one's letters are those it appended.
		end := endOffsets(b, job.adm, job.dlq)
		letters = append(letters, readDeadLetters(b, job.kc.Brokers, job.dlq, dlqSeen, end, -1))
		dlqSeen = end
	}

	if diff := snaps[0].diff(snaps[1]); diff != "" {
		b.Fatalf("Redis contents differ between rankstream and the Kafka Streams peer: %s", diff)
	}
	if diff := diffDeadLetters(letters[0], letters[1]); diff != "" {
		b.Fatalf("dead letters differ between rankstream and the Kafka Streams peer: %s", diff)
	}
	b.Logf("identical Redis contents: %d step keys, %d boards with %d members; %d dead letters each",
		len(snaps[0].strings), len(snaps[0].boards), snaps[0].members(), len(letters[0]))
	for _, r := range results {
		b.Logf("%-10s %9.0f records/s %6.1f CPU µs/record %6.0f MiB peak RSS %5.2f redis CPU µs/record (%d records in %s, after %s of start-up)",
			r.name, r.rate(), r.cpuPerRecord(), r.peakMiB(), r.redisPerRecord(), r.records,
			r.elapsed.Round(time.Millisecond), r.startup.Round(time.Millisecond))
		b.ReportMetric(r.rate(), r.name+"-records/s")
		b.ReportMetric(r.cpuPerRecord(), r.name+"-cpu-µs/record")
		b.ReportMetric(r.peakMiB(), r.name+"-peak-RSS-MiB")
		b.ReportMetric(r.redisPerRecord(), r.name+"-redis-cpu-µs/record")
	}
	b.ReportMetric(results[0].rate()/results[1].rate(), "speedup")
}

// envCount returns the positive count in the environment variable name, or def without it.
func envCount(t testing.TB, name string, def int) int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		t.Fatalf("%s=%q: want a positive count", name, s)
	}
	return v
}

// peerProject is a peer's Maven project beside this file, and the variable that names its jar
// instead.
type peerProject struct{ dir, env string }

var (
	stepsProject = peerProject{"kstreams-steps", envStepsJar}
	hotProject   = peerProject{"kstreams-hot", envHotJar}
)

// peerJar returns the peer's jar, built by `make bench-peers` (mvn package in its folder), or
// fails, as it does without java to run it.
func peerJar(t testing.TB, p peerProject) string {
	jar := os.Getenv(p.env)
	if jar == "" {
		jar = filepath.Join(p.dir, "target", p.dir+".jar")
	}
	abs, err := filepath.Abs(jar)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		t.Fatalf("the Kafka Streams peer %s is not built (run `make bench-peers`, or mvn package in internal/e2e/peers/%s): %v", p.dir, p.dir, err)
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatalf("no java to run the Kafka Streams peer: %v", err)
	}
	return abs
}

func javaOpts() []string {
	if s, ok := os.LookupEnv(envJavaOpts); ok {
		return strings.Fields(s)
	}
	return []string{"-Xmx1g"}
}

// stepReports generates the reports of BenchmarkSliceThroughput.
func stepReports(n int) []*kgo.Record {
	out := make([]*kgo.Record, 0, n)
	for _, r := range loadgen.BenchSteps(n, time.Now()) {
		out = append(out, &kgo.Record{Key: []byte(r.Key), Value: r.Value, Timestamp: r.Time})
	}
	return out
}

// poison returns invalid records of many kinds, a few valid ones in shapes the generator does
// not make (RFC 3339 times with an offset and a fraction), and a user who moves through 17
// regions in a day: the last move is one too many and is dead-lettered, the 16 before it move
// the user between boards.
func poison(now time.Time) []*kgo.Record {
	report := func(user, ts, extra string) []byte {
		return []byte(`{"request_id":"p-` + user + `","user_id":"` + user + `","steps":1000,"ts":` + ts + `,"tz":"Europe/Berlin"` + extra + `}`)
	}
	ms := func(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }
	at := ms(now)
	rec := func(key string, value []byte) *kgo.Record {
		return &kgo.Record{Key: []byte(key), Value: value, Timestamp: now}
	}
	out := []*kgo.Record{
		rec("p1", nil),
		rec("p2", []byte(`{"request_id":"x","user_id":"p2","steps":-5,"ts":`+at+`,"tz":"UTC"}`)),
		rec("p3", []byte(`{"request_id":"x","user_id":"p3","steps":999999,"ts":`+at+`,"tz":"UTC"}`)),
		rec("p4", []byte(`{"request_id":"x","user_id":"p4","steps":1,"tz":"UTC"}`)),
		rec("p5", []byte(`{"request_id":"x","user_id":"p5","steps":1,"ts":`+at+`,"tz":"Mars/Olympus"}`)),
		rec("p6", report("p7", at, "")),
		rec("p 8", report("p 8", at, "")),
		rec("p9", report("p9", ms(now.Add(-8*24*time.Hour)), "")),
		rec("p10", report("p10", ms(now.Add(10*time.Minute)), "")),
		rec("p11", []byte(`{"request_id":"x","user_id":"p11","steps":"12","ts":`+at+`,"tz":"UTC"}`)),
		rec("p12", []byte(`{"request_id":"x","user_id":"p12","steps":1.5,"ts":`+at+`,"tz":"UTC"}`)),
		rec("p13", []byte(`{"request_id":"x","user_id":"p13","steps":1,"ts":"2026-11-30T08:00:00+08:00","tz":"UTC","region":"a:b"}`)),
		rec("p14", []byte(`{"request_id":"x","user_id":"p14","steps":1,"ts":`+at+`,"tz":"Local"}`)),
		rec("p15", []byte(`not json`)),
		rec("p16", []byte(`{"request_id":1,"user_id":"p16","steps":1,"ts":`+at+`,"tz":"UTC"}`)),
		rec("p17", []byte(`[1]`)),
		rec("p18", []byte(`{"request_id":"x","user_id":"p18","steps":1,"ts":`+at+`,"tz":"UTC"} x`)),
		rec("p19", []byte(`{"request_id":"x","user_id":"p19","steps":1,"ts":"yesterday","tz":"UTC"}`)),
		rec("rfc1", report("rfc1", `"`+now.In(time.FixedZone("", 8*3600)).Format(time.RFC3339Nano)+`"`, `,"region":"eu-west"`)),
		rec("rfc2", report("rfc2", `"`+now.Add(-time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")+`"`, "")),
	}
	for i := range 17 {
		out = append(out, rec("mover", []byte(fmt.Sprintf(
			`{"request_id":"m%d","user_id":"mover","steps":%d,"ts":%s,"tz":"UTC","region":"r%02d"}`, i, 100+i, at, i))))
	}
	return out
}

// job is a job's topics on the real broker (all of our contract, 8 partitions each), under a
// prefix of their own; input is the job's input topic.
type job struct {
	kc                 kafka.Config
	adm                *kadm.Client
	prefix, input, dlq string
}

func newJob(t testing.TB, input goka.Stream) *job {
	brokers := testenv.KafkaBrokers(t)
	prefix := testenv.UniqueName(t, "peers") + "."
	j := &job{
		kc:     kafka.Config{Brokers: brokers, Partitions: 8, Names: topics.Names{Prefix: prefix}},
		adm:    testenv.KafkaAdmin(t, brokers),
		prefix: prefix,
	}
	j.input = string(j.kc.Names.Stream(input))
	j.dlq = string(j.kc.Names.Stream(topics.DLQ))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kcl, err := kafka.NewClient(j.kc)
	if err != nil {
		t.Fatal(err)
	}
	defer kcl.Close()
	if _, err := kcl.EnsureTopics(ctx, true); err != nil {
		t.Fatal(err)
	}
	return j
}

// rankstream is `rankstream process` on the job's topics, with its defaults, timed by its
// group (steps, hot).
func (j *job) rankstream(bin string, group goka.Group) system {
	return system{name: "rankstream", group: string(j.kc.Names.Group(group)), command: func(redisURL, _ string) []string {
		return []string{bin, "process", "--brokers", strings.Join(j.kc.Brokers, ","), "--redis", redisURL,
			"--topic-prefix", j.prefix, "--partitions", "8", "--http", "127.0.0.1:0", "--log-level", "warn"}
	}}
}

// kstreams is the Kafka Streams steps peer on the job's topics, with the JVM flags jvm, as the
// application (and consumer group) app under the job's prefix.
func (j *job) kstreams(jar string, jvm []string, app string) system {
	return system{name: "kstreams", group: j.prefix + app, command: func(redisURL, stateDir string) []string {
		args := append([]string{"java"}, jvm...)
		args = append(args, "-jar", jar, "--brokers", strings.Join(j.kc.Brokers, ","), "--redis", redisURL,
			"--input", j.input, "--dlq", j.dlq, "--application-id", j.prefix+app, "--state-dir", stateDir)
		if n := os.Getenv(envThreads); n != "" {
			args = append(args, "--threads", n)
		}
		return args
	}}
}

// produce sends the records to the job's input and waits for the acknowledgements.
func (j *job) produce(t testing.TB, records []*kgo.Record) {
	cl, err := j.kc.KgoClient(kgo.ProducerBatchMaxBytes(2<<20), kgo.ProducerLinger(5*time.Millisecond), kgo.DefaultProduceTopic(j.input))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	errs := make(chan error, 1)
	for _, r := range records {
		cl.Produce(context.Background(), r, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errs:
		t.Fatalf("produce: %v", err)
	default:
	}
}

// system is one implementation of the steps job, run as a child process.
type system struct {
	name  string
	group string
	// command returns the child's argv for a Redis URL and a state folder.
	command func(redisURL, stateDir string) []string
}

// result is what one run measured.
type result struct {
	name     string
	records  int64
	startup  time.Duration // from the child's start to its group's Stable
	elapsed  time.Duration
	cpu      time.Duration // of the child over elapsed
	peakRSS  int64         // bytes
	redisCPU time.Duration // of redis-server over the child's whole run
}

func (r result) rate() float64         { return float64(r.records) / r.elapsed.Seconds() }
func (r result) cpuPerRecord() float64 { return float64(r.cpu.Microseconds()) / float64(r.records) }
func (r result) peakMiB() float64      { return float64(r.peakRSS) / (1 << 20) }
func (r result) redisPerRecord() float64 {
	return float64(r.redisCPU.Microseconds()) / float64(r.records)
}

// run starts the system on a Redis database of its own and times it from its group's first
// Stable state until its commits cover total records of input and done (nil: nothing more)
// holds of its Redis database. Then collect reads what it left there, before it is stopped.
// It fails t when the system exits first or takes more than 10 minutes.
func (s system) run(t testing.TB, adm *kadm.Client, input string, total int64, done func(*goredis.Client) bool, collect func(*goredis.Client)) result {
	t.Helper()
	res, err := s.attempt(t, adm, input, total, done, collect, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// attempt is run, except that it returns an error, with the system's output, when the system
// exits before it has finished (a JVM out of heap) or does not finish within limit of its
// group's first Stable state; the system is then killed.
func (s system) attempt(t testing.TB, adm *kadm.Client, input string, total int64, done func(*goredis.Client) bool, collect func(*goredis.Client), limit time.Duration) (result, error) {
	t.Helper()
	addr, db := testenv.RedisAddr(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
	defer rdb.Close()
	redisBefore := testenv.RedisCPU(t, rdb)
	argv := s.command(fmt.Sprintf("redis://%s/%d", addr, db), t.TempDir())
	launched := time.Now()
	child := startChild(t, s.name, argv)
	fail := func(format string, args ...any) (result, error) {
		child.kill()
		return result{}, fmt.Errorf("%s: %s\n%s", s.name, fmt.Sprintf(format, args...), child.out.String())
	}

	deadline := time.Now().Add(5 * time.Minute)
	for !groupStable(adm, s.group) {
		if err := child.exited(); err != nil {
			return fail("%v", err)
		}
		if time.Now().After(deadline) {
			return fail("group %s not Stable after 5 minutes", s.group)
		}
		time.Sleep(10 * time.Millisecond)
	}
	start, cpuStart := time.Now(), child.cpu(t)
	deadline = time.Now().Add(limit)
	for testenv.Committed(adm, s.group, input) < total || done != nil && !done(rdb) {
		if err := child.exited(); err != nil {
			return fail("%v", err)
		}
		if time.Now().After(deadline) {
			return fail("group %s committed %d of %d records in %s (done: %v)", s.group,
				testenv.Committed(adm, s.group, input), total, limit, done == nil || done(rdb))
		}
		time.Sleep(20 * time.Millisecond)
	}
	res := result{name: s.name, records: total, startup: start.Sub(launched), elapsed: time.Since(start), cpu: child.cpu(t) - cpuStart, peakRSS: child.peakRSS(t)}
	res.redisCPU = testenv.RedisCPU(t, rdb) - redisBefore // before collect's reads
	collect(rdb)
	child.stop(t)
	return res, nil
}

func groupStable(adm *kadm.Client, group string) bool {
	gs, err := adm.DescribeGroups(context.Background(), group)
	if err != nil {
		return false
	}
	g, ok := gs[group]
	return ok && g.Err == nil && g.State == "Stable"
}

// child is a process of the benchmark whose CPU time and memory are read from /proc.
type child struct {
	name string
	cmd  *exec.Cmd
	out  *testenv.SyncBuffer
	done chan struct{}
	err  error
}

func startChild(t testing.TB, name string, argv []string) *child {
	c := &child{name: name, cmd: exec.Command(argv[0], argv[1:]...), out: &testenv.SyncBuffer{}, done: make(chan struct{})}
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		c.err = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = c.cmd.Process.Kill()
			<-c.done
		}
		if t.Failed() {
			t.Logf("output of %s (%s):\n%s", name, strings.Join(argv, " "), c.out.String())
		}
	})
	return c
}

// exited returns an error when the child has exited, nil while it runs.
func (c *child) exited() error {
	select {
	case <-c.done:
		return fmt.Errorf("exited: %v", c.err)
	default:
		return nil
	}
}

// checkAlive fails t when the child has exited.
func (c *child) checkAlive(t testing.TB) {
	if err := c.exited(); err != nil {
		t.Fatalf("%s %v\n%s", c.name, err, c.out.String())
	}
}

// kill ends the child with SIGKILL and waits for it.
func (c *child) kill() {
	_ = c.cmd.Process.Kill()
	<-c.done
}

// stop ends the child with SIGTERM, as an operator would, and waits for it.
func (c *child) stop(t testing.TB) {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(time.Minute):
		t.Fatalf("%s did not stop within a minute of SIGTERM\n%s", c.name, c.out.String())
	}
}

// cpu returns the child's user+system CPU time so far.
func (c *child) cpu(t testing.TB) time.Duration {
	d, err := testenv.PidCPU(c.cmd.Process.Pid, c.name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// peakRSS returns the child's VmHWM in bytes.
func (c *child) peakRSS(t testing.TB) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: VmHWM %q", c.name, v)
			}
			return kb << 10
		}
	}
	t.Fatalf("%s: no VmHWM in /proc/%d/status", c.name, c.cmd.Process.Pid)
	return 0
}

// snapshot is what the steps job left in Redis: every step key's value and every board's
// members and scores, each with its expiry time (EXPIRETIME, unix seconds).
type snapshot struct {
	strings map[string]string
	boards  map[string]map[string]float64
	expiry  map[string]int64
}

func (s snapshot) members() int {
	n := 0
	for _, m := range s.boards {
		n += len(m)
	}
	return n
}

// takeSnapshot reads the keys of the steps job (step:*, rank:steps:*): `rankstream process`
// also runs the hot-search job, whose keys are not compared here.
func takeSnapshot(t testing.TB, rdb *goredis.Client) snapshot {
	ctx := context.Background()
	s := snapshot{strings: map[string]string{}, boards: map[string]map[string]float64{}, expiry: map[string]int64{}}
	for _, pattern := range []string{"step:*", "rank:steps:*"} {
		var keys []string
		iter := rdb.Scan(ctx, 0, pattern, 10_000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Fatalf("SCAN %s: %v", pattern, err)
		}
		for chunk := range slices.Chunk(keys, 2000) {
			pipe := rdb.Pipeline()
			exp := make([]*goredis.DurationCmd, len(chunk))
			vals := make([]goredis.Cmder, len(chunk))
			for i, k := range chunk {
				exp[i] = pipe.ExpireTime(ctx, k)
				if pattern == "step:*" {
					vals[i] = pipe.Get(ctx, k)
				} else {
					vals[i] = pipe.ZRangeWithScores(ctx, k, 0, -1)
				}
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatalf("read %s: %v", pattern, err)
			}
			for i, k := range chunk {
				s.expiry[k] = int64(exp[i].Val() / time.Second)
				if exp[i].Val() < 0 { // -1: no expiry
					s.expiry[k] = -1
				}
				switch v := vals[i].(type) {
				case *goredis.StringCmd:
					s.strings[k] = v.Val()
				case *goredis.ZSliceCmd:
					m := make(map[string]float64, len(v.Val()))
					for _, z := range v.Val() {
						m[z.Member.(string)] = z.Score
					}
					s.boards[k] = m
				}
			}
		}
	}
	return s
}

// diff describes how t differs from s ("" when identical), with a few examples.
func (s snapshot) diff(t snapshot) string {
	var d []string
	add := func(format string, args ...any) {
		if len(d) < 10 {
			d = append(d, fmt.Sprintf(format, args...))
		}
	}
	for _, k := range sortedUnion(s.strings, t.strings) {
		v, ok1 := s.strings[k]
		w, ok2 := t.strings[k]
		if ok1 != ok2 || v != w {
			add("%s: %q (present %v) vs %q (present %v)", k, v, ok1, w, ok2)
		}
	}
	for _, k := range sortedUnion(s.boards, t.boards) {
		m, n := s.boards[k], t.boards[k]
		for _, member := range sortedUnion(m, n) {
			v, ok1 := m[member]
			w, ok2 := n[member]
			if ok1 != ok2 || v != w {
				add("%s member %s: %.0f (present %v) vs %.0f (present %v)", k, member, v, ok1, w, ok2)
			}
		}
	}
	for _, k := range sortedUnion(s.expiry, t.expiry) {
		if s.expiry[k] != t.expiry[k] {
			add("%s expires at %d vs %d", k, s.expiry[k], t.expiry[k])
		}
	}
	return strings.Join(d, "; ")
}

func sortedUnion[V any](a, b map[string]V) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// deadLetter is what the comparison needs of a dead letter.
type deadLetter struct {
	partition int32
	offset    int64
	reason    string
}

// endOffsets returns the topic's end offset per partition.
func endOffsets(t testing.TB, adm *kadm.Client, topic string) map[int32]int64 {
	ends, err := adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// readDeadLetters reads the dead letters between the offsets from (nil: the start) and to of
// each partition: the ones one run wrote; want of them (-1: as many as offsets in between).
func readDeadLetters(t testing.TB, brokers []string, topic string, from, to map[int32]int64, want int64) []deadLetter {
	var out []deadLetter
	readTopic(t, brokers, topic, from, to, want, func(r *kgo.Record) {
		h := map[string]string{}
		for _, kv := range r.Headers {
			h[kv.Key] = string(kv.Value)
		}
		p, _ := strconv.ParseInt(h[topics.HeaderSourcePartition], 10, 32)
		o, _ := strconv.ParseInt(h[topics.HeaderSourceOffset], 10, 64)
		out = append(out, deadLetter{partition: int32(p), offset: o, reason: h[topics.HeaderReason]})
	})
	return out
}

// readTopic passes each committed record of topic between the offsets from (nil: the start)
// and to of each partition to fn, want of them, or fails within a minute. want -1 is as many
// as offsets in between, which holds only for a topic without transactions: their markers
// take offsets too.
func readTopic(t testing.TB, brokers []string, topic string, from, to map[int32]int64, want int64, fn func(*kgo.Record)) {
	offsets := int64(0)
	start := map[int32]kgo.Offset{}
	for p, end := range to {
		offsets += end - from[p]
		start[p] = kgo.NewOffset().At(from[p])
	}
	if want < 0 {
		want = offsets
	}
	if want == 0 {
		return
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got := int64(0)
	for got < want && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if r.Offset < to[r.Partition] {
				got++
				fn(r)
			}
		})
	}
	if got < want {
		t.Fatalf("read %d of %d records of %s", got, want, topic)
	}
}

// diffDeadLetters compares two runs' dead letters by their source record. Reasons must be
// equal, except that a reason quoting the JSON decoder ("invalid event: json: ...") only needs
// to be one on both sides: Go's and Jackson's words differ.
func diffDeadLetters(a, b []deadLetter) string {
	key := func(d deadLetter) string { return fmt.Sprintf("%d/%d", d.partition, d.offset) }
	am, bm := map[string]string{}, map[string]string{}
	for _, d := range a {
		am[key(d)] = d.reason
	}
	for _, d := range b {
		bm[key(d)] = d.reason
	}
	var d []string
	for _, k := range sortedUnion(am, bm) {
		const jsonReason = "invalid event: json: "
		if strings.HasPrefix(am[k], jsonReason) && strings.HasPrefix(bm[k], jsonReason) {
			continue
		}
		if am[k] != bm[k] {
			d = append(d, fmt.Sprintf("record %s: %q vs %q", k, am[k], bm[k]))
		}
	}
	return strings.Join(d, "; ")
}
