package hote2e

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/app"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/hot/history"
	"github.com/rankstream/rankstream/processors/hot/merge"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// TestMergeWaitsThenPublishesMissingPartitions runs the merge group in-process on the real
// broker and kfake, publishing to real Redis and ClickHouse, with partials produced directly:
// (i) all four partitions report a window: one complete snapshot; (ii) one partition does not
// report the next window: after the wait a snapshot missing it, then its late partial
// republishes the window complete, which both stores keep; (iii) partials sent again for
// complete windows publish nothing, neither at once nor after the wait.
func TestMergeWaitsThenPublishesMissingPartitions(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		const partitions, wait = 4, time.Second
		kc := kafka.Config{Brokers: brokers, Partitions: partitions, Names: topics.Names{Prefix: testenv.UniqueName(t, "merge") + "."}}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		kcl := e2e.KafkaClient(t, kc)
		h := e2e.NewHistory(t)
		conn, sink := h.Conn, h.Sink
		rdb := testenv.Redis(t)

		log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
		cfg := merge.Config{Names: kc.Names, Partitions: partitions, K: 10, MergeWait: wait, Log: log}
		pub := app.Publisher{Redis: rsredis.NewHotWriter(rdb), History: history.NewQueue(kcl)}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 2)
		go func() {
			done <- merge.Run(runCtx, cfg, pub, brokers, kc.ProcessorOptions(kc.Names.Group(merge.Group), log)...)
		}()
		go func() { done <- history.Run(runCtx, kc, app.History{Sink: sink}, log) }()
		t.Cleanup(func() {
			stop()
			for range 2 {
				if err := <-done; err != nil {
					t.Errorf("RunMerge or history.Run: %v", err)
				}
			}
		})

		cl, err := kc.KgoClient()
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		partialsTopic := string(kc.Names.Stream(topics.HotPartials))
		send := func(end int64, parts ...int32) {
			t.Helper()
			for _, p := range parts {
				v, _ := json.Marshal(mergePartial(end, p))
				if err := cl.ProduceSync(ctx, &kgo.Record{Topic: partialsTopic, Key: []byte(strconv.FormatInt(end, 10)), Value: v}).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
		}
		// latestIs waits until Redis holds the window ending at end missing the given partitions.
		latestIs := func(end int64, missing string) topics.TopKSnapshot {
			t.Helper()
			var s topics.TopKSnapshot
			testenv.WaitFor(t, 30*time.Second, fmt.Sprintf("Redis: window %d missing %s", end, missing), func() bool {
				b, err := rdb.Get(ctx, rsredis.HotKey(topics.SearchStream)).Bytes()
				return err == nil && json.Unmarshal(b, &s) == nil && s.WindowEnd.UnixMilli() == end && fmt.Sprint(s.MissingPartitions) == missing
			})
			return s
		}

		start := time.Now().Truncate(time.Second).Add(-time.Minute)
		w1, w2 := start.UnixMilli(), start.Add(5*time.Second).UnixMilli()

		// (i) every partition reports.
		send(w1, 0, 1, 2, 3)
		s1 := latestIs(w1, "[]")
		if got := itemNames(s1); got != "p3 p2 p1 p0" {
			t.Fatalf("window 1: items %s", got)
		}
		waitRows(t, conn, w1, "missing 0: p3 p2 p1 p0", "window 1 in ClickHouse")

		// (ii) partition 2 does not report: after the wait, a snapshot without it.
		sent := time.Now()
		send(w2, 3, 0, 1)
		latestIs(w2, "[2]")
		if waited := time.Since(sent); waited < wait {
			t.Fatalf("published without partition 2 after %s, before the wait of %s", waited, wait)
		}
		waitRows(t, conn, w2, "missing 1: p3 p1 p0", "window 2 in ClickHouse after the wait")
		// Its late partial republishes it complete.
		send(w2, 2)
		s2 := latestIs(w2, "[]")
		if got := itemNames(s2); got != "p3 p2 p1 p0" {
			t.Fatalf("window 2 complete: items %s", got)
		}
		waitRows(t, conn, w2, "missing 0: p3 p2 p1 p0", "window 2 in ClickHouse after the late partial")

		// (iii) partials sent again for both complete windows: nothing is published, neither
		// now nor after the wait (no entry waits for the other partitions again).
		rows := countRows(t, conn)
		send(w1, 1)
		send(w2, 2, 3)
		processed(t, ctx, cl, kc.Names.Group(merge.Group), partialsTopic)
		time.Sleep(wait + 500*time.Millisecond) // the wait and two sweeps (every wait/4)
		processed(t, ctx, cl, kc.Names.Group(history.Group), string(kc.Names.Stream(topics.HotHistory)))
		if got := countRows(t, conn); got != rows {
			t.Fatalf("partials sent again added rows to topk_history: %d, before %d", got, rows)
		}
		if again := latestIs(w2, "[]"); !again.GeneratedAt.Equal(s2.GeneratedAt) {
			t.Fatalf("partials sent again republished window 2: generated at %s, first %s", again.GeneratedAt, s2.GeneratedAt)
		}
	})
}

// mergePartial is partition p's partial of the window ending at end: one item, "p<N>", whose
// count is 10 × (N + 1).
func mergePartial(end int64, p int32) topics.HotPartial {
	return topics.HotPartial{Partition: p, WindowStart: end - time.Hour.Milliseconds(), WindowEnd: end,
		Items: []topics.PartialItem{{Item: fmt.Sprint("p", p), Count: uint64(10 * (p + 1))}}}
}

func itemNames(s topics.TopKSnapshot) string {
	names := make([]string, len(s.Items))
	for i, it := range s.Items {
		names[i] = it.Item
	}
	return strings.Join(names, " ")
}

// finalRows describes the window ending at end as ClickHouse shows it under FINAL: the
// partitions its snapshot missed (read from the version) and its items by rank.
func finalRows(t *testing.T, conn driver.Conn, end int64) string {
	t.Helper()
	var rows []struct {
		Item    string `ch:"item"`
		Missing int64  `ch:"missing"`
	}
	err := conn.Select(context.Background(), &rows, "SELECT item, "+rsclickhouse.TopKMissingSQL+
		" AS missing FROM topk_history FINAL WHERE window_end = toDateTime(?) ORDER BY rank", end/1000)
	if err != nil {
		t.Fatal(err)
	}
	out := ""
	for i, r := range rows {
		if i == 0 {
			out = fmt.Sprintf("missing %d:", r.Missing)
		}
		out += " " + r.Item
	}
	return out
}

// waitRows waits until finalRows of the window ending at end is want.
func waitRows(t *testing.T, conn driver.Conn, end int64, want, what string) {
	t.Helper()
	got := ""
	testenv.WaitFor(t, 30*time.Second, what+": "+want, func() bool {
		got = finalRows(t, conn, end)
		return got == want
	})
}

// processed waits until group has committed every record of topic.
func processed(t *testing.T, ctx context.Context, cl *kgo.Client, group goka.Group, topic string) {
	t.Helper()
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	testenv.WaitCommitted(t, adm, string(group), topic, n, 2*time.Minute)
}

// testWriter sends log lines to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// countRows counts topk_history's rows as written (before FINAL).
func countRows(t *testing.T, conn driver.Conn) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM topk_history").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMergeSkipsInvalidSnapshot: a window whose merged snapshot is invalid (here an item whose
// error is above its count) is logged, counted and skipped, not retried forever: the next
// window, on the same (single) partition, is published.
func TestMergeSkipsInvalidSnapshot(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		const partitions = 1
		kc := kafka.Config{Brokers: brokers, Partitions: partitions, Names: topics.Names{Prefix: testenv.UniqueName(t, "invalid") + "."}}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		e2e.KafkaClient(t, kc)
		rdb := testenv.Redis(t)
		log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
		cfg := merge.Config{Names: kc.Names, Partitions: partitions, K: 10, MergeWait: time.Second, Log: log}
		pub := app.Publisher{Redis: rsredis.NewHotWriter(rdb)}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- merge.Run(runCtx, cfg, pub, brokers, kc.ProcessorOptions(kc.Names.Group(merge.Group), log)...)
		}()
		defer func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("RunMerge: %v", err)
			}
		}()
		cl, err := kc.KgoClient()
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		start := time.Now().Truncate(time.Second).Add(-time.Minute)
		w1, w2 := start.UnixMilli(), start.Add(5*time.Second).UnixMilli()
		for _, end := range []int64{w1, w2} {
			for p := range int32(partitions) {
				part := mergePartial(end, p)
				if end == w1 {
					part.Items[0].Error = part.Items[0].Count + 1 // no true count can lie in [count - error, count]
				}
				v, _ := json.Marshal(part)
				rec := &kgo.Record{Topic: string(kc.Names.Stream(topics.HotPartials)), Key: []byte(strconv.FormatInt(end, 10)), Value: v}
				if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
					t.Fatal(err)
				}
			}
		}
		testenv.WaitFor(t, time.Minute, "the window after the invalid one in Redis", func() bool {
			var s topics.TopKSnapshot
			b, err := rdb.Get(ctx, rsredis.HotKey(topics.SearchStream)).Bytes()
			return err == nil && json.Unmarshal(b, &s) == nil && s.WindowEnd.UnixMilli() == w2
		})
	})
}
