package reconcile

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// TestReadTableInOrderWithProgress: readTable hands every record of the steps table's
// changelog, tombstones included, in offset order per key, and logs its progress while a long
// read runs (here slowed by its callback) and a last line with the count. Both brokers.
func TestReadTableInOrderWithProgress(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		kc := kafka.Config{Brokers: brokers, Partitions: 4, Names: topics.Names{Prefix: testenv.UniqueName(t, "readtable") + "."}}
		cl, err := kafka.NewClient(kc)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := cl.EnsureTopics(ctx, true); err != nil {
			t.Fatal(err)
		}
		topic := string(kc.Names.Table(steps.Group))
		var recs []*kgo.Record
		for i := range 60 {
			var v []byte
			if i%7 != 6 {
				v = []byte(fmt.Sprint(i))
			}
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("k%d", i%5)), Value: v})
		}
		if err := cl.ProduceSync(ctx, recs...); err != nil {
			t.Fatal(err)
		}
		var logs testenv.SyncBuffer
		log := slog.New(slog.NewTextHandler(&logs, nil))
		latest := map[string]string{}
		n := 0
		err = readTable(ctx, cl, topic, 20*time.Millisecond, log, func(k string, v []byte) error {
			n++
			latest[k] = string(v)
			time.Sleep(5 * time.Millisecond)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := 55; i < 60; i++ {
			want := fmt.Sprint(i)
			if i%7 == 6 {
				want = ""
			}
			if got := latest[fmt.Sprintf("k%d", i%5)]; n != 60 || got != want {
				t.Fatalf("%d records, k%d = %q, want 60 and %q", n, i%5, got, want)
			}
		}
		out := logs.String()
		if !strings.Contains(out, "reconcile: reading the table") || !strings.Contains(out, "of=60") || !strings.Contains(out, "msg=\"reconcile: table read\"") {
			t.Fatalf("logs:\n%s", out)
		}
	})
}
