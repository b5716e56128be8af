package kafka

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/lovoo/goka"
	"github.com/lovoo/goka/tester"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// TestDeadLetterCountsAndLogsWithRateLimit: every dead letter goes to the topic with its bytes
// and headers and is counted; the log of the processor's Run gets the first of a burst at warn,
// the others are held back and counted in the next line's not_logged.
func TestDeadLetterCountsAndLogsWithRateLimit(t *testing.T) {
	const in, dlq = "unit.dl.in", "unit.dl.dlq"
	tt := tester.New(t)
	graph := goka.DefineGroup("unit-dl",
		goka.Input(in, topics.Raw{}, func(ctx goka.Context, msg any) {
			DeadLetter(ctx, dlq, msg.([]byte), errors.New("bad record"))
		}),
		goka.Output(dlq, topics.Raw{}),
	)
	proc, err := goka.NewProcessor(nil, graph, goka.WithTester(tt))
	if err != nil {
		t.Fatal(err)
	}
	var buf testenv.SyncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, proc, "unit-dl", log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	out := tt.NewQueueTracker(dlq)
	counted := obs.DeadLettered("unit-dl", in, "other")
	before := counterValue(counted)

	const n = 50
	start := time.Now()
	for i := range n {
		tt.Consume(in, "k", []byte{'v', byte(i)})
	}
	most := 1 + int(time.Since(start)/obs.LogEvery)
	for i := range n {
		key, value, ok := out.Next()
		if !ok || key != "k" || !bytes.Equal(value.([]byte), []byte{'v', byte(i)}) {
			t.Fatalf("dead letter %d = %q, %q, %v; want k, v%d", i, key, value, ok, i)
		}
	}
	if got := counterValue(counted) - before; got != n {
		t.Errorf("counted %v dead letters, want %d", got, n)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var logged []string
	for _, l := range lines {
		if strings.Contains(l, "record dead-lettered") {
			logged = append(logged, l)
		}
	}
	if len(logged) == 0 || len(logged) > most {
		t.Fatalf("%d dead letters logged of %d; want 1 to %d:\n%s", len(logged), n, most, buf.String())
	}
	for _, want := range []string{"level=WARN", "group=unit-dl", "topic=" + in, "offset=0", "value_bytes=2", `reason="bad record"`, "not_logged=0"} {
		if !strings.Contains(logged[0], want) {
			t.Errorf("first line %q lacks %s", logged[0], want)
		}
	}
}
