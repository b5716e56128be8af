package steps

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/service/loadgen"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// BenchmarkProcess measures the callback's own work per record (decode, the user's state
// read and written through the table's codec, the merge, the sink's hand-over) on the input
// of BenchmarkSliceThroughput (200k users, 10% duplicates, 10% stale), without Kafka: a
// context keeps the table in a map, the sink acknowledges at once. Run it with -benchtime
// 1000000x (more wraps around the input, whose second pass is all duplicates).
func BenchmarkProcess(b *testing.B) {
	const n = 1_000_000
	now := time.Now()
	records := loadgen.BenchSteps(n, now)
	p := newProcessor(Config{Names: topics.Names{Prefix: "bench."}, Rules: topics.DefaultStepRules, Sink: ackSink{},
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	table := map[string][]byte{}
	var ctx benchContext
	b.ReportAllocs()
	i := 0
	cpu := testenv.ProcessCPU(b)
	for b.Loop() {
		r := records[i%n]
		ctx = benchContext{key: r.Key, partition: int32(len(r.Key) % 8), ts: now, table: table}
		p.process(&ctx, r.Value)
		i++
	}
	b.ReportMetric(float64(testenv.ProcessCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
}

type ackSink struct{}

func (ackSink) Submit(_ *board.StepUpdate, done func(error)) { done(nil) }

// benchContext is the part of goka.Context the callback uses on valid records; the table is
// encoded and decoded with the group's codec, as goka's storage does.
type benchContext struct {
	gokaContext // nil: any other method panics
	key         string
	partition   int32
	ts          time.Time
	table       map[string][]byte
}

type gokaContext = goka.Context

var benchCodec = stateCodec{}

func (c *benchContext) Key() string          { return c.key }
func (c *benchContext) Partition() int32     { return c.partition }
func (c *benchContext) Timestamp() time.Time { return c.ts }
func (c *benchContext) DeferCommit() func(error) {
	return func(error) {}
}

func (c *benchContext) Value() any {
	b, ok := c.table[c.key]
	if !ok {
		return nil
	}
	v, err := benchCodec.Decode(b)
	if err != nil {
		panic(err)
	}
	return v
}

func (c *benchContext) SetValue(v any, _ ...goka.ContextOption) {
	b, err := benchCodec.Encode(v)
	if err != nil {
		panic(err)
	}
	c.table[c.key] = b
}
