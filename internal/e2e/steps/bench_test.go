package stepse2e

import (
	"log/slog"
	"testing"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/service/loadgen"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// BenchmarkSliceThroughput measures, on the real broker and redis-server, reports per second
// through the whole slice (Kafka → `rankstream process` with its default settings → Redis,
// counted when the group's committed offsets cover every report, which happens only after
// Redis acknowledged), beside the raw franz-go consume rate of the same topic, goka's own
// ceiling (a processor with an empty callback) and its floor for a processor keeping a state
// per key (testenv.GokaTableRate), each with its CPU per record; and what a report costs: CPU
// of the process, CPU of redis-server, and Redis commands (those run by scripts included).
// Run it once: -benchtime 1x.
func BenchmarkSliceThroughput(b *testing.B) {
	const n = 1_000_000
	records := make([]e2e.Record, 0, n)
	for _, r := range loadgen.BenchSteps(n, time.Now()) {
		records = append(records, e2e.Record{Key: r.Key, Value: r.Value})
	}
	e, topic, rate := runSlice(b, records)
	raw := testenv.RawConsumeRate(b, e.Kafka.Brokers, topic, n)
	b.ReportMetric(raw, "raw-consume/s")
	b.ReportMetric(rate/raw, "ratio")
	g := goka.Group(e.Kafka.Names.Prefix + "noop")
	cpu0 := testenv.ProcessCPU(b)
	ceiling := testenv.GokaNoopRate(b, e.Kafka.Brokers, g, topic, n, e.Kafka.ProcessorOptions(g, slog.New(slog.DiscardHandler))...)
	cpu1 := testenv.ProcessCPU(b)
	b.ReportMetric(ceiling, "goka-noop/s")
	b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/1e3/n, "goka-noop-cpu-µs/record")
	g = goka.Group(e.Kafka.Names.Prefix + "table")
	table := testenv.GokaTableRate(b, e.Kafka.Brokers, g, topic, n, e.Kafka.ProcessorOptions(g, slog.New(slog.DiscardHandler))...)
	b.ReportMetric(table, "goka-table/s")
	b.ReportMetric(float64((testenv.ProcessCPU(b)-cpu1).Nanoseconds())/1e3/n, "goka-table-cpu-µs/record")
}

// BenchmarkMidnightSurge: the reports of 200k users over one simulated day (UTC), with
// every zone's midnight surge (each user of a zone sends the final count of the day that ended
// and a first report of the new one at once), through the whole slice, reporting the same
// costs per report as BenchmarkSliceThroughput: the surge's Redis writes per report are what
// the per user-day coalescing and the skipped re-sends save. Beside them it reports the load's
// own floor, floor-writes/report: every user-day's value must reach Redis at least once,
// however the writes are batched or delayed, so no sink writing a key per user-day can go
// below its distinct user-days per report. Run it once: -benchtime 1x.
func BenchmarkMidnightSurge(b *testing.B) {
	const regular = 600_000
	gen, err := loadgen.NewSteps(loadgen.StepsConfig{Users: 200_000, DupRatio: 0.1, StaleRatio: 0.1, MidnightSurge: true, Seed: 9})
	if err != nil {
		b.Fatal(err)
	}
	// The day ends at the last UTC midnight, not now: the zones' midnights then fall at the
	// same points of the load whenever it runs (ending now, the writes per report depended on
	// the hour of the run: 0.32 to 0.42 with the same code).
	end := time.Now().Add(-time.Minute).Truncate(24 * time.Hour)
	start := end.Add(-24 * time.Hour)
	var records []e2e.Record
	for i := range regular {
		at := start.Add(time.Duration(i) * 24 * time.Hour / regular)
		for _, r := range gen.Next(at) {
			records = append(records, e2e.Record{Key: r.Key, Value: r.Value})
		}
	}
	floor := float64(userDays(b, records)) / float64(len(records))
	runSlice(b, records)
	b.ReportMetric(floor, "floor-writes/report") // after runSlice: its timer's reset deletes metrics
}

// userDays counts the distinct user-days of records, decoded as the processor decodes them
// (an invalid report fails b: the benchmark's loads hold none).
func userDays(b *testing.B, records []e2e.Record) int {
	type userDay struct {
		user string
		day  board.Day
	}
	days := make(map[userDay]struct{})
	now := time.Now()
	for _, r := range records {
		rep, loc, err := topics.DecodeStepReport(r.Key, r.Value, now, topics.DefaultStepRules)
		if err != nil {
			b.Fatalf("the load's report %s: %v", r.Value, err)
		}
		days[userDay{r.Key, board.DayOf(rep.TS.Time, loc)}] = struct{}{}
	}
	return len(days)
}

// runSlice runs `rankstream process` (default settings) on records and reports reports/s
// and the costs per report (testenv.Slice.Measure; RANKSTREAM_SLICE_PROFILE=<folder> saves
// the process's profiles there).
func runSlice(b *testing.B, records []e2e.Record) (e *stepsRun, topic string, rate float64) {
	e = newE2E(b, testenv.KafkaBrokers(b))
	topic = string(e.Kafka.Names.Stream(topics.StepsReported))
	http := testenv.FreeAddr(b)
	s := testenv.Slice{Process: e.Start("bench", "--http", http), HTTP: http, Redis: e.Redis, Admin: testenv.KafkaAdmin(b, e.Kafka.Brokers),
		Group: string(e.Kafka.Names.Group(steps.Group)), Topic: topic, Produce: func(lo, hi int) { e.produce(records[lo:hi], 0) }}
	costs := s.Measure(b, len(records))
	costs.Report(b, "report")
	return e, topic, costs.Rate
}
