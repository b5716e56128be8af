package testenv

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/lovoo/goka"
	"github.com/lovoo/goka/codec"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaAdmin returns an admin client of brokers, closed when the test ends.
func KafkaAdmin(t testing.TB, brokers []string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatalf("testenv: kafka client for %v: %v", brokers, err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// Committed sums the offsets group has committed on the partitions of topic: how many of the
// topic's records (from offset 0) the group has finished with. A group that has not committed
// yet, or an offset fetch that fails, counts 0.
func Committed(adm *kadm.Client, group, topic string) int64 {
	offs, err := adm.FetchOffsets(context.Background(), group)
	if err != nil {
		return 0
	}
	var sum int64
	offs.Each(func(o kadm.OffsetResponse) {
		if o.Topic == topic && o.Err == nil && o.At > 0 {
			sum += o.At
		}
	})
	return sum
}

// WaitCommitted waits until group's committed offsets on topic cover n records (see
// Committed), polling every 50 ms, and fails the test after timeout.
func WaitCommitted(t testing.TB, adm *kadm.Client, group, topic string, n int64, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := Committed(adm, group, topic)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("testenv: group %s committed %d of %d records of %s after %s", group, got, n, topic, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// RawConsumeRate reads n records of topic from its start with a plain franz-go consumer (no
// group, no decoding) and returns records per second, counted from the client's creation: the
// rate the broker and the client library allow, the ceiling of any processor of the topic. It
// fails the test if the records are not all read within 2 minutes.
func RawConsumeRate(t testing.TB, brokers []string, topic string, n int) float64 {
	t.Helper()
	start := time.Now()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatalf("testenv: kafka client for %v: %v", brokers, err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := 0
	for got < n && ctx.Err() == nil {
		got += cl.PollFetches(ctx).NumRecords()
	}
	if got < n {
		t.Fatalf("testenv: raw consumer read %d of %d records of %s", got, n, topic)
	}
	return float64(got) / time.Since(start).Seconds()
}

// RawProduceRate produces records (each naming its topic) with a plain franz-go producer of
// its defaults (idempotent, acks from all in-sync replicas), all at once asynchronously, and
// returns records per second, counted from the client's creation until every record was
// acknowledged: the rate the broker and the client library allow, the ceiling of anything
// that writes the topic. It fails the test if a record fails or they are not all acknowledged
// within 2 minutes.
func RawProduceRate(t testing.TB, brokers []string, records []*kgo.Record) float64 {
	t.Helper()
	start := time.Now()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxBufferedRecords(len(records)+1))
	if err != nil {
		t.Fatalf("testenv: kafka client for %v: %v", brokers, err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	failed := make(chan error, 1)
	for _, r := range records {
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case failed <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatalf("testenv: raw producer: %v", err)
	}
	select {
	case err := <-failed:
		t.Fatalf("testenv: raw producer: %v", err)
	default:
	}
	return float64(len(records)) / time.Since(start).Seconds()
}

// GokaNoopRate is the ceiling goka itself puts on a processor of topic: a processor of group
// (opts: configured like the real one) whose callback does nothing, timed until it consumed n
// records, counted from its first record so that group start-up is left out; records per
// second. It fails the test if the processor stops or takes more than 5 minutes.
func GokaNoopRate(t testing.TB, brokers []string, group goka.Group, topic string, n int, opts ...goka.ProcessorOption) float64 {
	t.Helper()
	return gokaRate(t, brokers, group, topic, n, false, opts...)
}

// GokaTableRate is GokaNoopRate for a processor with a group table whose callback reads its
// key's value and stores the record's value in its place (ctx.Value, ctx.SetValue): the least
// a processor merging each record into a state per key pays per record, the table's read and
// write and its changelog's produce. Like GokaNoopRate's, its rate is taken at the n-th
// callback: the changelog's last records may not be acknowledged yet.
func GokaTableRate(t testing.TB, brokers []string, group goka.Group, topic string, n int, opts ...goka.ProcessorOption) float64 {
	t.Helper()
	return gokaRate(t, brokers, group, topic, n, true, opts...)
}

// gokaRate runs GokaNoopRate's processor, with a group table if table.
func gokaRate(t testing.TB, brokers []string, group goka.Group, topic string, n int, table bool, opts ...goka.ProcessorOption) float64 {
	t.Helper()
	var count, first atomic.Int64
	done := make(chan struct{})
	edges := []goka.Edge{goka.Input(goka.Stream(topic), new(codec.Bytes), func(ctx goka.Context, msg any) {
		if table {
			ctx.Value() // read, decoded and dropped: a merge's read
			ctx.SetValue(msg)
		}
		if count.Add(1) == 1 {
			first.Store(time.Now().UnixNano())
		}
		if count.Load() == int64(n) {
			close(done)
		}
	})}
	if table {
		edges = append(edges, goka.Persist(new(codec.Bytes)))
		createChangelog(t, brokers, topic, goka.GroupTable(group))
	}
	proc, err := goka.NewProcessor(brokers, goka.DefineGroup(group, edges...), opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- proc.Run(ctx) }()
	select {
	case <-done:
	case err := <-stopped:
		t.Fatalf("testenv: goka processor %s stopped: %v", group, err)
	case <-time.After(5 * time.Minute):
		t.Fatalf("testenv: goka processor %s consumed %d of %d records in 5 minutes", group, count.Load(), n)
	}
	rate := float64(n-1) / time.Since(time.Unix(0, first.Load())).Seconds()
	cancel()
	<-stopped
	return rate
}

// createChangelog creates a group table's changelog topic with as many partitions as the
// group's input topic, compacted as the real processors' tables are.
func createChangelog(t testing.TB, brokers []string, input string, changelog goka.Table) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := KafkaAdmin(t, brokers)
	details, err := adm.ListTopics(ctx, input)
	if err != nil || details[input].Err != nil {
		t.Fatalf("testenv: describe %s: %v %v", input, err, details[input].Err)
	}
	compact := "compact"
	if _, err := adm.CreateTopic(ctx, int32(len(details[input].Partitions)), -1, map[string]*string{"cleanup.policy": &compact}, string(changelog)); err != nil {
		t.Fatalf("testenv: create %s: %v", changelog, err)
	}
}

// ProcessCPU is the CPU time (user and system, the garbage collector's included) this process
// has used so far: per operation of a benchmark, a steadier figure than the elapsed time on a
// machine shared with other work.
func ProcessCPU(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
