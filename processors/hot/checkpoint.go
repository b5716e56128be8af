package hot

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
)

// kafkaStore is what the processor writes to and reads from Kafka: kafkaIO, or a test's.
type kafkaStore interface {
	produceAsync(ctx context.Context, r *kgo.Record, done func(*kgo.Record, error))
	producerContext() context.Context
	produce(ctx context.Context, recs ...*kgo.Record) error
	end(ctx context.Context, topic string, partition int32) (int64, error)
	offsets(ctx context.Context, topic string) (start, end map[int32]int64, err error)
	committed(ctx context.Context, group, topic string) (map[int32]int64, error)
	latest(ctx context.Context, topic string, partition int32) (*kgo.Record, error)
	read(ctx context.Context, topic string, partition int32, from, to int64, fn func(*kgo.Record) error) error
}

// kafkaIO writes checkpoints synchronously through the process's Kafka client, partials (a
// checkpoint waits for those emitted before it: inflight) and loop records (loopBuffer)
// asynchronously, and reads a partition's latest checkpoint and loop records back.
type kafkaIO struct {
	cl *kafka.Client
	// ctx is the loop records' context: it outlives the goka sessions (and Run's context), so
	// that the flush at a session's end goes out; the records of a flush that never got
	// through fail when the client is closed.
	ctx context.Context
}

// produceAsync hands a record to the client (kafka.Client.Produce).
func (k *kafkaIO) produceAsync(ctx context.Context, r *kgo.Record, done func(*kgo.Record, error)) {
	k.cl.Produce(ctx, r, done)
}

// producerContext is the context of the loop records.
func (k *kafkaIO) producerContext() context.Context { return k.ctx }

// produce stores records and returns once the brokers acknowledged all of them. franz-go
// retries until ctx ends, so a broker that is down holds the partition back (and its offsets
// uncommitted) instead of losing a partial.
func (k *kafkaIO) produce(ctx context.Context, recs ...*kgo.Record) error {
	if err := k.cl.ProduceSync(ctx, recs...); err != nil {
		return fmt.Errorf("hot: %w", err)
	}
	return nil
}

// end returns a partition's end offset (the offset its next record will get).
func (k *kafkaIO) end(ctx context.Context, topic string, partition int32) (int64, error) {
	end, err := k.cl.EndOffset(ctx, topic, partition)
	if err != nil {
		return 0, fmt.Errorf("hot: %w", err)
	}
	return end, nil
}

// offsets returns the start and end offsets of every partition of a topic.
func (k *kafkaIO) offsets(ctx context.Context, topic string) (start, end map[int32]int64, err error) {
	list := func(l func(context.Context, ...string) (kadm.ListedOffsets, error)) (map[int32]int64, error) {
		listed, err := l(ctx, topic)
		if err == nil {
			err = listed.Error()
		}
		if err != nil {
			return nil, fmt.Errorf("hot: offsets of %s: %w", topic, err)
		}
		m := map[int32]int64{}
		listed.Each(func(o kadm.ListedOffset) { m[o.Partition] = o.Offset })
		return m, nil
	}
	if start, err = list(k.cl.Admin().ListStartOffsets); err == nil {
		end, err = list(k.cl.Admin().ListEndOffsets)
	}
	return start, end, err
}

// committed returns group's committed offsets on topic by partition (absent: none).
func (k *kafkaIO) committed(ctx context.Context, group, topic string) (map[int32]int64, error) {
	return k.cl.Committed(ctx, group, topic)
}

// latest returns the last record of a partition, or nil when the partition is empty.
func (k *kafkaIO) latest(ctx context.Context, topic string, partition int32) (*kgo.Record, error) {
	end, err := k.end(ctx, topic, partition)
	if err != nil || end == 0 {
		return nil, err // compacted topics keep a partition's last record: only a new one is empty
	}
	var last *kgo.Record
	err = k.read(ctx, topic, partition, end-1, end, func(r *kgo.Record) error { last = r; return nil })
	return last, err
}

// read calls fn for each record of a partition at offsets in [from, to), in order.
func (k *kafkaIO) read(ctx context.Context, topic string, partition int32, from, to int64, fn func(*kgo.Record) error) error {
	if err := k.cl.Read(ctx, topic, map[int32]int64{partition: from}, map[int32]int64{partition: to}, fn); err != nil {
		return fmt.Errorf("hot: read %s/%d: %w", topic, partition, err)
	}
	return nil
}

// inflight counts a loop partition's partials handed to the client and not yet acknowledged,
// and keeps the first failure. The partition's goroutine adds and waits, the client's
// acknowledge.
type inflight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n falls to 0; nil while nobody waits
	err  error
}

func (f *inflight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

// done is the produce callback of a partial.
func (f *inflight) done(_ *kgo.Record, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil && f.err == nil {
		f.err = fmt.Errorf("hot: partial: %w", err)
	}
	if f.n--; f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// failed returns the first partial's failure, if any.
func (f *inflight) failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// wait returns once every partial added is acknowledged, with the first failure, or when ctx
// ends (the session: a partial still in flight then fails when its context does).
func (f *inflight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.n == 0 {
		defer f.mu.Unlock()
		return f.err
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return f.failed()
	case <-ctx.Done():
		return ctx.Err()
	}
}
