package stepse2e

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/loadgen"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// BenchmarkSliceThroughput measures, on the real broker and redis-server, reports per second
// through the whole slice (Kafka → `rankstream process` with its default settings → Redis,
// counted when the group's committed offsets cover every report, which happens only after
// Redis acknowledged), beside the raw franz-go consume rate of the same topic and goka's own
// ceiling (a processor with an empty callback); and what a report costs: CPU of the process,
// CPU of redis-server, and Redis commands (those run by scripts included). Run it once:
// -benchtime 1x.
func BenchmarkSliceThroughput(b *testing.B) {
	const n = 1_000_000
	gen, err := loadgen.NewSteps(loadgen.StepsConfig{Users: 200_000, DupRatio: 0.1, StaleRatio: 0.1, Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	var records []e2e.Record
	for len(records) < n {
		for _, r := range gen.Next(time.Now()) {
			records = append(records, e2e.Record{Key: r.Key, Value: r.Value})
		}
	}
	e, topic, rate := runSlice(b, records[:n])
	raw := testenv.RawConsumeRate(b, e.kc.Brokers, topic, n)
	b.ReportMetric(raw, "raw-consume/s")
	b.ReportMetric(rate/raw, "ratio")
	ceiling := gokaNoopRate(b, e, topic, n)
	b.ReportMetric(ceiling, "goka-noop/s")
}

// BenchmarkMidnightSurge: the reports of 200k users over one simulated day ending now, with
// every zone's midnight surge (each user of a zone sends the final count of the day that ended
// and a first report of the new one at once), through the whole slice, reporting the same
// costs per report as BenchmarkSliceThroughput: the surge's Redis writes per report are what
// the per user-day coalescing and the skipped re-sends save. Run it once: -benchtime 1x.
func BenchmarkMidnightSurge(b *testing.B) {
	const regular = 600_000
	gen, err := loadgen.NewSteps(loadgen.StepsConfig{Users: 200_000, DupRatio: 0.1, StaleRatio: 0.1, MidnightSurge: true, Seed: 9})
	if err != nil {
		b.Fatal(err)
	}
	end := time.Now().Add(-time.Minute)
	start := end.Add(-24 * time.Hour)
	var records []e2e.Record
	for i := range regular {
		at := start.Add(time.Duration(i) * 24 * time.Hour / regular)
		for _, r := range gen.Next(at) {
			records = append(records, e2e.Record{Key: r.Key, Value: r.Value})
		}
	}
	runSlice(b, records)
}

// runSlice produces records[0], waits until `rankstream process` (default settings) committed
// it, then times the rest through the slice and reports reports/s and the costs per report.
func runSlice(b *testing.B, records []e2e.Record) (e *stepsRun, topic string, rate float64) {
	n := len(records)
	e = newE2E(b, testenv.KafkaBrokers(b))
	group := string(e.kc.Names.Group(steps.Group))
	topic = string(e.kc.Names.Stream(topics.StepsReported))
	adm := testenv.KafkaAdmin(b, e.kc.Brokers)

	proc := e.start("bench")
	e.produce(records[:1], 0)
	testenv.WaitCommitted(b, adm, group, topic, 1, 5*time.Minute)

	cpu0, rcpu0, rcmd0 := processCPU(b, proc), redisCPU(b, e), redisCommands(b, e)
	b.ResetTimer()
	start := time.Now()
	e.produce(records[1:], 0)
	testenv.WaitCommitted(b, adm, group, topic, int64(n), 10*time.Minute)
	elapsed := time.Since(start)
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n-1) }
	rate = float64(n-1) / elapsed.Seconds()
	b.ReportMetric(rate, "reports/s")
	b.ReportMetric(per(processCPU(b, proc)-cpu0), "cpu-µs/report")
	b.ReportMetric(per(redisCPU(b, e)-rcpu0), "redis-cpu-µs/report")
	b.ReportMetric(float64(redisCommands(b, e)-rcmd0)/float64(n-1), "redis-cmds/report")
	return e, topic, rate
}

func processCPU(b *testing.B, p *testenv.Process) time.Duration {
	d, err := p.CPU()
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// redisCPU is redis-server's CPU time so far (INFO cpu: used_cpu_sys + used_cpu_user).
func redisCPU(b *testing.B, e *stepsRun) time.Duration {
	var sum float64
	for _, f := range []string{"used_cpu_sys", "used_cpu_user"} {
		sum += redisInfoNumber(b, e, "cpu", f)
	}
	return time.Duration(sum * float64(time.Second))
}

// redisCommands is how many commands redis-server processed so far, those run by scripts
// included (INFO stats: total_commands_processed).
func redisCommands(b *testing.B, e *stepsRun) int64 {
	return int64(redisInfoNumber(b, e, "stats", "total_commands_processed"))
}

func redisInfoNumber(b *testing.B, e *stepsRun, section, field string) float64 {
	info, err := e.rdb.Info(context.Background(), section).Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				b.Fatalf("INFO %s %s: %q", section, field, v)
			}
			return f
		}
	}
	b.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// gokaNoopRate is the ceiling goka itself puts on the slice: a processor of the same topic,
// configured like the real one, whose callback does nothing; timed until it consumed n
// records, counted from its first record so that group start-up is left out.
func gokaNoopRate(b *testing.B, e *stepsRun, topic string, n int) float64 {
	var count atomic.Int64
	var first atomic.Int64
	done := make(chan struct{})
	g := goka.Group(e.kc.Names.Prefix + "noop")
	graph := goka.DefineGroup(g, goka.Input(goka.Stream(topic), topics.Raw{}, func(goka.Context, any) {
		if count.Add(1) == 1 {
			first.Store(time.Now().UnixNano())
		}
		if count.Load() == int64(n) {
			close(done)
		}
	}))
	proc, err := goka.NewProcessor(e.kc.Brokers, graph, e.kc.ProcessorOptions(g, slog.New(slog.DiscardHandler))...)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- proc.Run(ctx) }()
	select {
	case <-done:
	case err := <-stopped:
		b.Fatalf("no-op processor stopped: %v", err)
	case <-time.After(5 * time.Minute):
		b.Fatalf("no-op processor consumed %d of %d records in 5 minutes", count.Load(), n)
	}
	rate := float64(n-1) / time.Since(time.Unix(0, first.Load())).Seconds()
	cancel()
	<-stopped
	return rate
}
