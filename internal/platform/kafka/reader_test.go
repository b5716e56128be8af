package kafka_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/topics"
)

// createTopic creates a topic of n partitions with configs and waits until it can be written.
func createTopic(ctx context.Context, t *testing.T, cl *kafka.Client, n int32, configs map[string]*string) string {
	t.Helper()
	topic := testenv.UniqueName(t, "read")
	resp, err := cl.Admin().CreateTopic(ctx, n, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	for p := range n {
		testenv.WaitFor(t, 30*time.Second, "a leader of the new topic's partitions", func() bool {
			_, err := cl.EndOffset(ctx, topic, p)
			return err == nil
		})
	}
	return topic
}

// TestReadRanges reads offset ranges of several partitions, at once from concurrent Reads, up
// to a record far above franz-go's default fetch sizes (a checkpoint-sized value), and the
// records the Client's partitioner put in their key's partition.
func TestReadRanges(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cl := newClient(t, kafka.Config{Brokers: brokers})
		big := strconv.Itoa(topics.MaxCheckpointBytes)
		topic := createTopic(ctx, t, cl, 3, map[string]*string{"max.message.bytes": &big})
		const n = 50
		var recs []*kgo.Record
		for p := range int32(3) {
			for i := range n {
				recs = append(recs, kafka.InPartition(&kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte(fmt.Sprintf("%d/%d", p, i))}, p))
			}
		}
		huge := bytes.Repeat([]byte{'x'}, 10<<20)
		recs = append(recs, kafka.InPartition(&kgo.Record{Topic: topic, Key: []byte("huge"), Value: huge}, 2))
		if err := cl.ProduceSync(ctx, recs...); err != nil {
			t.Fatal(err)
		}

		read := func(from, to map[int32]int64) map[int32][]string {
			got := map[int32][]string{}
			err := cl.Read(ctx, topic, from, to, func(r *kgo.Record) error {
				v := string(r.Value)
				if len(r.Value) > 100 {
					v = fmt.Sprintf("%d bytes", len(r.Value))
				}
				got[r.Partition] = append(got[r.Partition], fmt.Sprintf("%d:%s", r.Offset, v))
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			return got
		}
		want := func(p int32, from, to int) []string {
			var w []string
			for i := from; i < to; i++ {
				w = append(w, fmt.Sprintf("%d:%d/%d", i, p, i))
			}
			return w
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				got := read(map[int32]int64{0: 0, 1: 17, 2: 49, 3: 0}, map[int32]int64{0: n, 1: 18, 2: n + 1, 3: 0})
				if fmt.Sprint(got[0]) != fmt.Sprint(want(0, 0, n)) || fmt.Sprint(got[1]) != fmt.Sprint(want(1, 17, 18)) ||
					fmt.Sprint(got[2]) != fmt.Sprint(append(want(2, 49, n), fmt.Sprintf("%d:%d bytes", n, len(huge)))) || len(got) != 3 {
					t.Errorf("read %v", got)
				}
			})
		}
		wg.Wait()
		if got := read(map[int32]int64{1: 5}, map[int32]int64{1: 5}); len(got) != 0 {
			t.Errorf("empty range read %v", got)
		}

		// A record not made by InPartition goes to its key's partition, as with every producer.
		for _, key := range []string{"a", "b", "c", "d"} {
			p := kafka.PartitionOf(key, 3)
			end, err := cl.EndOffset(ctx, topic, p)
			if err != nil {
				t.Fatal(err)
			}
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Key: []byte(key), Value: []byte(key)}); err != nil {
				t.Fatal(err)
			}
			if got := read(map[int32]int64{p: end}, map[int32]int64{p: end + 1}); fmt.Sprint(got[p]) != fmt.Sprintf("[%d:%s]", end, key) {
				t.Errorf("key %s: partition %d holds %v", key, p, got)
			}
		}
	})
}

// TestClearEmptiesTable clears a compacted topic holding more live keys than fit one batch
// of its max.message.bytes (the default, 1 MiB; random keys, so that compression does not
// shrink them below it), half of them in a partition their key does not hash to: afterwards
// every key's latest record, in its partition, is a tombstone.
func TestClearEmptiesTable(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		kc := kafka.Config{Brokers: brokers}
		cl := newClient(t, kc)
		compact := "compact"
		topic := createTopic(ctx, t, cl, 2, map[string]*string{"cleanup.policy": &compact})
		const keys = 100_000
		rnd := rand.New(rand.NewPCG(1, 2))
		var recs []*kgo.Record
		for i := range keys {
			k := fmt.Sprintf("user-%016x%016x", rnd.Uint64(), rnd.Uint64())
			if i == 0 {
				k = "user-0"
			}
			recs = append(recs, kafka.InPartition(&kgo.Record{Topic: topic, Key: []byte(k), Value: []byte("v")}, int32(i%2)))
		}
		recs = append(recs, kafka.InPartition(&kgo.Record{Topic: topic, Key: []byte("user-0")}, 0)) // already deleted
		// Written with a producer of default settings (1 MB batches), as goka writes tables.
		prod, err := kc.KgoClient(kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer prod.Close()
		if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		ends := func() map[int32]int64 {
			e := map[int32]int64{}
			for p := range int32(2) {
				off, err := cl.EndOffset(ctx, topic, p)
				if err != nil {
					t.Fatal(err)
				}
				e[p] = off
			}
			return e
		}
		before := ends()

		if err := cl.Clear(ctx, topic); err != nil {
			t.Fatal(err)
		}
		latest := map[string]*kgo.Record{}
		if err := cl.Read(ctx, topic, map[int32]int64{0: 0, 1: 0}, ends(), func(r *kgo.Record) error {
			latest[fmt.Sprint(r.Partition, string(r.Key))] = r
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(latest) != keys {
			t.Fatalf("%d keys, want %d", len(latest), keys)
		}
		for k, r := range latest {
			if r.Value != nil {
				t.Fatalf("key %s still has a value after Clear", k)
			}
		}
		after := ends()
		if tombstones := after[0] + after[1] - before[0] - before[1]; tombstones != keys-1 {
			t.Errorf("%d tombstones written, want %d", tombstones, keys-1)
		}
	})
}

// TestClientOpensNoConnectionPerCall checks that the Client's functions work on its one
// franz-go client: once every function ran, running them all again opens no connection to
// the broker (every new connection starts with an ApiVersions request, counted by kfake).
// Opening a franz-go client of its own, as each call did before, is seen at once.
func TestClientOpensNoConnectionPerCall(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(2))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var conns atomic.Int64
	c.ControlKey(int16(kmsg.ApiVersions), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		conns.Add(1)
		return nil, nil, false
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kc := kafka.Config{Brokers: c.ListenAddrs(), Partitions: 2, Names: topics.Names{Prefix: "one."}}
	cl := newClient(t, kc)
	checkpoints := string(kc.Names.Stream(topics.HotCheckpoints))
	every := func() {
		t.Helper()
		if _, err := cl.EnsureTopics(ctx, true); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.ResetOffsets(ctx, kc.Names.Group(topics.HotGroup), kc.Names.Stream(topics.SearchQueries), time.Time{}); err != nil {
			t.Fatal(err)
		}
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: checkpoints, Key: []byte("k"), Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
		end, err := cl.EndOffset(ctx, checkpoints, kafka.PartitionOf("k", 2))
		if err != nil {
			t.Fatal(err)
		}
		p := kafka.PartitionOf("k", 2)
		if err := cl.Read(ctx, checkpoints, map[int32]int64{p: end - 1}, map[int32]int64{p: end}, func(*kgo.Record) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := cl.Clear(ctx, checkpoints); err != nil {
			t.Fatal(err)
		}
	}
	every()
	opened := conns.Load()
	if opened == 0 {
		t.Fatal("no connection counted")
	}
	for range 3 {
		every()
	}
	if n := conns.Load(); n != opened {
		t.Fatalf("%d connections opened by the first calls, %d by the next three: a call opens a client of its own", opened, n-opened)
	}
	own, err := kc.KgoClient()
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if err := own.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if conns.Load() == opened {
		t.Fatal("a client of its own was not counted: the check above cannot fail")
	}
}
