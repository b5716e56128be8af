package scorese2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/service/loadgen"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/scores"
	"github.com/rankstream/rankstream/processors/steps"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// benchBoard is BenchmarkScoreThroughput's board: points added per match, ranked per day and
// in total, sharded in 4; each member also belongs to a region (a scope), so an op writes 4
// entries (2 periods, global and scope).
const benchBoard = `boards:
  - name: bench
    periods: [d, total]
    tz: UTC
    retention: 2d
    shards: 4
`

// BenchmarkScoreThroughput measures, on the real broker and redis-server, score updates per
// second through the whole path: 1M incr ops of 200k members (10% re-sent with their request
// id) pre-produced to scores.updated → `rankstream process --boards` with its default
// settings → Redis, counted like the steps slice (testenv.Slice: until the group's committed
// offsets cover every op, which happens only after Redis acknowledged them), with the costs
// per update; then every member's total score on the board is checked against the
// sums of the ops' first deliveries. Beside it: the raw franz-go consume rate of the same topic
// and, from the same run (the same process, before the ops), the steps slice's reports per
// second on BenchmarkSliceThroughput's stream, and the ratio of the two rates (the target is at
// least 1). Run it once: -benchtime 1x.
func BenchmarkScoreThroughput(b *testing.B) {
	const n = 1_000_000
	now := time.Now()
	stepRecords := make([]e2e.Record, 0, n)
	for _, r := range loadgen.BenchSteps(n, now) {
		stepRecords = append(stepRecords, e2e.Record{Key: r.Key, Value: r.Value})
	}
	gen, err := loadgen.NewScores(loadgen.ScoresConfig{Boards: []loadgen.ScoreBoardLoad{{Board: "bench", Op: topics.OpIncr}},
		Members: 200_000, DupRatio: 0.1, Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	type request struct{ member, id string }
	seen := map[request]bool{}
	want := map[string]int64{} // member -> total score
	var ops []e2e.Record
	for len(ops) < n {
		for _, r := range gen.Next(now) {
			o, err := topics.DecodeScoreOp(r.Key, r.Value, now, topics.DefaultScoreRules)
			if err != nil {
				b.Fatalf("generated op %s: %v", r.Value, err)
			}
			if req := (request{o.Member, o.RequestID}); !seen[req] {
				seen[req] = true
				want[o.Member] += o.Score
			}
			ops = append(ops, e2e.Record{Key: r.Key, Value: r.Value})
		}
	}

	file := filepath.Join(b.TempDir(), "boards.yaml")
	if err := os.WriteFile(file, []byte(benchBoard), 0o644); err != nil {
		b.Fatal(err)
	}
	r := newRun(b, testenv.KafkaBrokers(b), file)
	proc, adm := r.start("bench"), testenv.KafkaAdmin(b, r.Kafka.Brokers)
	slice := func(group goka.Group, stream goka.Stream, records []e2e.Record) testenv.Slice {
		return testenv.Slice{Process: proc, Redis: r.Redis, Admin: adm, Group: string(r.Kafka.Names.Group(group)),
			Topic: string(r.Kafka.Names.Stream(stream)), Produce: func(lo, hi int) { produceTo(b, r.Kafka, stream, records[lo:hi]) }}
	}
	stepsRate := slice(steps.Group, topics.StepsReported, stepRecords).Measure(b, len(stepRecords)).Rate
	s := slice(scores.Group, topics.ScoresUpdated, ops)
	costs := s.Measure(b, len(ops))

	got := map[string]int64{}
	err = rsredis.NewReader(r.Redis).ScanBoard(context.Background(), rsredis.BoardRef{Board: "bench", Period: board.PeriodTotal, Shards: 4}, 10_000,
		func(rows []rsredis.Ranked) error {
			for _, row := range rows {
				got[row.Member] = row.Score
			}
			return nil
		})
	if err != nil {
		b.Fatal(err)
	}
	if len(got) != len(want) {
		b.Fatalf("the total board holds %d members, want %d", len(got), len(want))
	}
	for m, w := range want {
		if got[m] != w {
			b.Fatalf("member %s: total %d on the board, want %d", m, got[m], w)
		}
	}
	costs.Report(b, "update")
	raw := testenv.RawConsumeRate(b, r.Kafka.Brokers, s.Topic, n)
	b.ReportMetric(raw, "raw-consume/s")
	b.ReportMetric(stepsRate, "steps-reports/s")
	b.ReportMetric(costs.Rate/stepsRate, "updates/steps")
}
