package kafka_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
)

// counting is a Batch that counts the records it holds and those its writes stored.
type counting struct {
	held, written atomic.Int64
}

func (c *counting) Add(*kgo.Record) error { c.held.Add(1); return nil }
func (c *counting) Len() int              { return int(c.held.Load()) }
func (c *counting) Reset()                { c.held.Store(0) }
func (c *counting) Write(context.Context) error {
	c.written.Add(c.held.Load())
	return nil
}
func (c *counting) Retryable(error) bool { return false }

// TestBatchConsumerDrainsOnStop: a consumer stopped while its batch gathers (an interval far
// longer than the test) writes that batch and commits it before Run returns, so the next owner
// has nothing to write again.
func TestBatchConsumerDrainsOnStop(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		kc := kafka.Config{Brokers: brokers}
		cl := newClient(t, kc)
		topic := createTopic(ctx, t, cl, 2, nil)
		const n = 100
		var recs []*kgo.Record
		for i := range n {
			recs = append(recs, kafka.InPartition(&kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(i))}, int32(i%2)))
		}
		if err := cl.ProduceSync(ctx, recs...); err != nil {
			t.Fatal(err)
		}
		batch := &counting{}
		group := topic + ".g"
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- kafka.BatchConsumer{Group: group, Topic: topic, Batch: batch, MaxBatch: 10 * n, Interval: time.Hour,
				Skipped: prometheus.NewCounter(prometheus.CounterOpts{Name: "skipped"}),
				Log:     slog.New(slog.NewTextHandler(io.Discard, nil))}.Run(runCtx, kc)
		}()
		testenv.WaitFor(t, 30*time.Second, "every record in the batch", func() bool { return batch.Len() == n })
		if batch.written.Load() != 0 {
			t.Fatalf("%d records written before the interval ended", batch.written.Load())
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := batch.written.Load(); got != n {
			t.Fatalf("the stop wrote %d records, want %d", got, n)
		}
		committed, err := cl.Committed(ctx, group, topic)
		if err != nil {
			t.Fatal(err)
		}
		if committed[0]+committed[1] != n {
			t.Fatalf("committed %v after the stop, want %d records covered", committed, n)
		}
	})
}
