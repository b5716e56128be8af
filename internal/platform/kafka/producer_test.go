package kafka_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
)

// TestProcessorProducer emits rounds of keys through the processors' producer (goka's
// Producer) and closes it at once: Close must wait for every promise, each promise must report
// success with the record's partition and offset (goka stores a table's offset from it), every
// key must be in the partition goka's sarama producer put it in before (murmur2 with sarama's
// WithAbsFirst) and Kafka's default partitioner (franz-go's) puts it in, and the records of a
// key must be stored in the order they were emitted, with their headers, in LZ4 batches.
func TestProcessorProducer(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cl := newClient(t, kafka.Config{Brokers: brokers})
		const partitions, keys, rounds = 12, 2000, 3
		topic := createTopic(ctx, t, cl, partitions, nil)
		prod, err := kafka.Config{Brokers: brokers}.NewProcessorProducer(slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}

		type result struct {
			partition int32
			offset    int64
			err       error
		}
		var mu sync.Mutex
		results := map[string]result{} // value -> how its promise finished
		for round := range rounds {
			for k := range keys {
				key, value := "u"+strconv.Itoa(k), fmt.Sprintf("u%d/%d", k, round)
				p := prod.EmitWithHeaders(topic, key, []byte(value), goka.Headers{"round": []byte(strconv.Itoa(round))})
				p.ThenWithMessage(func(msg *sarama.ProducerMessage, err error) {
					r := result{partition: -1, offset: -1, err: err}
					if msg != nil {
						r.partition, r.offset = msg.Partition, msg.Offset
					}
					mu.Lock()
					results[value] = r
					mu.Unlock()
				})
			}
		}
		if err := prod.Close(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		finished := len(results)
		mu.Unlock()
		if finished != keys*rounds {
			t.Fatalf("Close returned with %d of %d promises finished", finished, keys*rounds)
		}

		saramaPart := sarama.NewCustomPartitioner(sarama.WithAbsFirst(), sarama.WithCustomHashFunction(kafka.NewMurmur2))(topic)
		kgoPart := kgo.StickyKeyPartitioner(nil).ForTopic(topic)
		want := func(key string) int32 {
			t.Helper()
			s, err := saramaPart.Partition(&sarama.ProducerMessage{Key: sarama.StringEncoder(key)}, partitions)
			if err != nil {
				t.Fatal(err)
			}
			if k := kgoPart.Partition(&kgo.Record{Key: []byte(key)}, partitions); int32(k) != s {
				t.Fatalf("key %q: sarama's partitioner %d, franz-go's %d", key, s, k)
			}
			return s
		}
		for value, r := range results {
			key := value[:len(value)-2]
			if r.err != nil || r.partition != want(key) || r.offset < 0 {
				t.Fatalf("%s: promise finished in partition %d at offset %d, err %v; want partition %d", value, r.partition, r.offset, r.err, want(key))
			}
		}

		from, to := map[int32]int64{}, map[int32]int64{}
		for p := range int32(partitions) {
			end, err := cl.EndOffset(ctx, topic, p)
			if err != nil {
				t.Fatal(err)
			}
			from[p], to[p] = 0, end
		}
		next := map[string]int{} // key -> the round of its next record
		lz4 := 0                 // records of LZ4 batches (the codec the producer sends)
		err = cl.Read(ctx, topic, from, to, func(r *kgo.Record) error {
			if r.Attrs.CompressionType() == 3 {
				lz4++
			}
			key, value := string(r.Key), string(r.Value)
			round := next[key]
			next[key]++
			if value != fmt.Sprintf("%s/%d", key, round) {
				return fmt.Errorf("key %s: record %d is %q, want round %d (emitted order)", key, round, value, round)
			}
			if res := results[value]; r.Partition != res.partition || r.Offset != res.offset {
				return fmt.Errorf("%s stored at %d/%d, its promise said %d/%d", value, r.Partition, r.Offset, res.partition, res.offset)
			}
			if len(r.Headers) != 1 || r.Headers[0].Key != "round" || string(r.Headers[0].Value) != strconv.Itoa(round) {
				return fmt.Errorf("%s: headers %v", value, r.Headers)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if lz4 == 0 {
			t.Fatal("no record in an LZ4 batch")
		}
		if len(next) != keys {
			t.Fatalf("read %d keys, want %d", len(next), keys)
		}
		for key, n := range next {
			if n != rounds {
				t.Fatalf("key %s: %d records, want %d", key, n, rounds)
			}
		}
	})
}

// TestProcessorProducerBrokerDown: with no broker to take them, the processors' producer must
// fail its records within a bounded time (goka then stops the processor with the error and
// the supervisor restarts it), not keep them forever as franz-go's default does, and Close
// must return.
func TestProcessorProducerBrokerDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	prod, err := kafka.Config{Brokers: []string{down}}.NewProcessorProducer(slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	failed := make(chan error, 1)
	prod.Emit("t", "k", []byte("v")).Then(func(err error) { failed <- err })
	select {
	case err := <-failed:
		if err == nil {
			t.Fatal("a record with no broker to take it succeeded")
		}
		t.Logf("failed: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("a record with no broker to take it did not fail within a minute")
	}
	closed := make(chan error, 1)
	go func() { closed <- prod.Close() }()
	select {
	case <-closed:
	case <-time.After(time.Minute):
		t.Fatal("Close did not return within a minute")
	}
}
