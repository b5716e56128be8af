package stepse2e

import (
	"context"
	"log/slog"
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
// through the whole slice (Kafka → `rankstream process` → Redis, counted when the group's
// committed offsets cover every report, which happens only after Redis acknowledged), and the
// raw franz-go consume rate of the same topic. Run it once: -benchtime 1x.
func BenchmarkSliceThroughput(b *testing.B) {
	const n = 1_000_000
	e := newE2E(b, testenv.KafkaBrokers(b))
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
	records = records[:n]
	group := string(e.kc.Names.Group(steps.Group))
	topic := string(e.kc.Names.Stream(topics.StepsReported))

	adm := testenv.KafkaAdmin(b, e.kc.Brokers)

	e.start("bench")
	e.produce(records[:1], 0)
	testenv.WaitCommitted(b, adm, group, topic, 1, 5*time.Minute)

	b.ResetTimer()
	start := time.Now()
	e.produce(records[1:], 0)
	testenv.WaitCommitted(b, adm, group, topic, n, 5*time.Minute)
	slice := float64(n-1) / time.Since(start).Seconds()
	b.StopTimer()

	raw := testenv.RawConsumeRate(b, e.kc.Brokers, topic, n)
	ceiling := gokaNoopRate(b, e, topic, n)
	b.ReportMetric(slice, "reports/s")
	b.ReportMetric(raw, "raw-consume/s")
	b.ReportMetric(slice/raw, "ratio")
	b.ReportMetric(ceiling, "goka-noop/s")
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
