package kafka_test

import (
	"context"
	"log/slog"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lovoo/goka"
	"github.com/lovoo/goka/codec"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
)

// TestCommitsInOffsetOrder runs a goka processor with ProcessorOptions whose callback holds
// the commit of one record (DeferCommit) while the records after it finish: the group's
// committed offset must stay at that record, however long the later ones have been finished
// (goka marks each record's next offset in sarama, which kept the highest: a crash then lost
// the held record), and move past all of them once it finishes.
func TestCommitsInOffsetOrder(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		kc := kafka.Config{Brokers: brokers}
		cl := newClient(t, kc)
		topic := createTopic(ctx, t, cl, 1, nil)
		const n, held = 6, 2
		for i := range n {
			if err := cl.ProduceSync(ctx, kafka.InPartition(&kgo.Record{Topic: topic, Value: []byte(strconv.Itoa(i))}, 0)); err != nil {
				t.Fatal(err)
			}
		}

		group := goka.Group(testenv.UniqueName(t, "order"))
		var seen atomic.Int64
		release := make(chan func(error), 1)
		graph := goka.DefineGroup(group, goka.Input(goka.Stream(topic), new(codec.Bytes), func(ctx goka.Context, _ any) {
			done := ctx.DeferCommit()
			seen.Add(1)
			if ctx.Offset() == held {
				release <- done
				return
			}
			done(nil)
		}))
		proc, err := goka.NewProcessor(brokers, graph, kc.ProcessorOptions(group, slog.New(slog.DiscardHandler))...)
		if err != nil {
			t.Fatal(err)
		}
		runCtx, stop := context.WithCancel(ctx)
		stopped := make(chan error, 1)
		go func() { stopped <- proc.Run(runCtx) }()
		defer func() {
			select { // a failed check left the record held: goka's stop would wait for it
			case done := <-release:
				done(nil)
			default:
			}
			stop()
			if err := <-stopped; err != nil {
				t.Errorf("processor: %v", err)
			}
		}()

		adm := testenv.KafkaAdmin(t, brokers)
		testenv.WaitCommitted(t, adm, string(group), topic, held, time.Minute)
		testenv.WaitFor(t, time.Minute, "every record handed to the callback", func() bool { return seen.Load() == n })
		time.Sleep(time.Second) // ten commit intervals with the later records finished
		if got := testenv.Committed(adm, string(group), topic); got != held {
			t.Fatalf("committed %d with record %d unfinished, want %d", got, held, held)
		}
		(<-release)(nil)
		testenv.WaitCommitted(t, adm, string(group), topic, n, time.Minute)
	})
}
