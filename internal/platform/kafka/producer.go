package kafka

import (
	"bytes"
	"context"
	"fmt"
	"hash"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/lovoo/goka"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// The processors' producer: goka's Producer (their table changelogs, loop topics, dead letters
// and other emits) on a franz-go client instead of goka's sarama AsyncProducer, which cost 17%
// of the steps slice's CPU and goka's promise plumbing around it 5% more.
//
// What goka relies on, and how this producer keeps it:
//   - A key goes to the partition Kafka's clients pick (murmur2, positive hash): the Client's
//     partitioner (partitionLikeKafka), as goka's sarama producer was configured before.
//   - A promise finishes only once the brokers acknowledged its record (acks=all), because
//     goka commits an input message only when every promise of its callback finished without
//     error; a table write's promise carries the record's offset (goka stores it as the
//     table's offset).
//   - The records of one partition are stored in the order they were emitted (a table's
//     changelog must end with a key's latest value): franz-go's idempotent producer keeps that
//     order across its retries (sequence numbers, at most 5 requests in flight a broker).
//   - A broker that stays unreachable fails the records within producerDeliveryTimeout, as
//     sarama's retries did: goka then stops the processor with the error and the supervisor
//     restarts it (a record failed while its request was in flight may still have been
//     written: the restarted processor rewrites the same values, so a changelog may hold a
//     value twice, never out of order, since franz-go fails every later record of that
//     partition with it).

// producerDeliveryTimeout bounds how long the processors' producer keeps retrying a record:
// long enough to ride out a partition leader's move (a few seconds), short enough that a lost
// broker surfaces as an error, stopping the processor, within the time goka's own consumer
// takes to give up.
const producerDeliveryTimeout = 10 * time.Second

// producerCloseTimeout bounds Close's flush: records still unacknowledged by then have failed
// (producerDeliveryTimeout) or fail when the client closes.
const producerCloseTimeout = producerDeliveryTimeout + 5*time.Second

// producerBuilder builds the processors' producer (newProducer) for goka; goka's brokers,
// client id and hasher are the Config's (ProcessorOptions gives goka the same).
func (c Config) producerBuilder(log *slog.Logger) goka.ProducerBuilder {
	return func([]string, string, func() hash.Hash32) (goka.Producer, error) {
		return c.newProducer(log)
	}
}

// producer is goka's Producer on a franz-go client: acks from all in-sync replicas, LZ4 like
// the sarama producer it replaces, batches no larger than their topic takes (batchBytes),
// Kafka's partitioning and producerDeliveryTimeout.
type producer struct {
	cl     *kgo.Client
	log    *slog.Logger
	failed obs.LogLimiter
}

func (c Config) newProducer(log *slog.Logger) (*producer, error) {
	log = log.With("component", "producer")
	cl, err := c.KgoClient(
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.WithCompressor(newLZ4Compressor()),
		kgo.ProducerBatchMaxBytesFn(c.batchBytes()),
		kgo.MaxBufferedBytes(4*topics.MaxProduceBytes),
		kgo.RecordDeliveryTimeout(producerDeliveryTimeout),
		kgo.AllowIdempotentProduceCancellation(),
		partitionLikeKafka(),
		kgo.WithLogger(kgoLogger{log}),
	)
	if err != nil {
		return nil, fmt.Errorf("kafka: processor producer: %w", err)
	}
	return &producer{cl: cl, log: log}, nil
}

// lz4Compressor is franz-go's LZ4 codec with 64 KiB blocks, the block size of Kafka's Java
// producer, instead of pierrec/lz4's default of 4 MiB: each batch compressed at once takes a
// block buffer of that size from a pool the collector empties, which held 12 MB of the steps
// slice's heap (three 4 MiB blocks) for batches of tens of KiB. franz-go sends a batch
// uncompressed when compressing does not make it smaller.
type lz4Compressor struct{ writers sync.Pool }

func newLZ4Compressor() *lz4Compressor {
	c := &lz4Compressor{}
	c.writers.New = func() any {
		w := lz4.NewWriter(nil)
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			panic("BUG: kafka: lz4 block size: " + err.Error())
		}
		return w
	}
	return c
}

// Compress is kgo.Compressor's: src compressed into dst, or nil (the batch then goes
// uncompressed) if the codec failed.
func (c *lz4Compressor) Compress(dst *bytes.Buffer, src []byte, _ ...kgo.CompressFlag) ([]byte, kgo.CompressionCodecType) {
	w := c.writers.Get().(*lz4.Writer)
	defer c.writers.Put(w)
	w.Reset(dst)
	if _, err := w.Write(src); err != nil {
		return nil, kgo.CodecNone
	}
	if err := w.Close(); err != nil {
		return nil, kgo.CodecNone
	}
	return dst.Bytes(), kgo.CodecLz4
}

// batchBytes is the largest batch (before compression) the processors' producer sends to a
// topic: topics.MaxProduceBytes to the topics made for dead letters and large values (a
// max.message.bytes of at least topics.MaxDLQMessageBytes in Names.Specs), franz-go's default
// (defaultBatchBytes, under the brokers' default max.message.bytes of 1 MiB + 12 even after
// LZ4's growth) to the others: brokers check a compressed batch against its topic's limit, and
// a table's changelog written in a backlog (batches as large as allowed) would otherwise
// exceed it.
func (c Config) batchBytes() func(topic string) int32 {
	large := map[string]bool{}
	for _, s := range c.Names.Specs(c.partitions()) {
		if n, err := strconv.Atoi(s.Configs["max.message.bytes"]); err == nil && n >= topics.MaxDLQMessageBytes {
			large[s.Name] = true
		}
	}
	return func(topic string) int32 {
		if large[topic] {
			return topics.MaxProduceBytes
		}
		return defaultBatchBytes
	}
}

// emitted is a record in flight with goka's promise of it. It is also the record's Context
// (a context that is never done), which is how delivered finds the promise without a closure
// per record.
type emitted struct {
	context.Context
	rec    kgo.Record
	finish goka.PromiseFinisher
	msg    sarama.ProducerMessage // what the promise reports on success: topic, partition, offset
}

// Emit sends value under key to topic; the promise finishes once the brokers acknowledged it
// or it failed. It blocks while the client holds its limit of buffered bytes.
func (p *producer) Emit(topic string, key string, value []byte) *goka.Promise {
	return p.EmitWithHeaders(topic, key, value, nil)
}

// EmitWithHeaders is Emit with record headers.
func (p *producer) EmitWithHeaders(topic string, key string, value []byte, headers goka.Headers) *goka.Promise {
	promise, finish := goka.NewPromiseWithFinisher()
	e := &emitted{Context: context.Background(), finish: finish}
	e.rec = kgo.Record{Topic: topic, Key: []byte(key), Value: value, Context: e}
	if len(headers) > 0 {
		e.rec.Headers = make([]kgo.RecordHeader, 0, len(headers))
		for k, v := range headers {
			e.rec.Headers = append(e.rec.Headers, kgo.RecordHeader{Key: k, Value: v})
		}
	}
	p.cl.Produce(context.Background(), &e.rec, p.delivered)
	return promise
}

// delivered finishes a record's promise; franz-go calls it once per record, in order within
// a partition.
func (p *producer) delivered(r *kgo.Record, err error) {
	e := r.Context.(*emitted)
	if err != nil {
		p.failed.Log(context.Background(), p.log, slog.LevelWarn, "produce failed",
			"topic", r.Topic, "partition", r.Partition, "err", err)
		e.finish(nil, fmt.Errorf("kafka: produce to %s/%d: %w", r.Topic, r.Partition, err))
		return
	}
	if r.Offset < 0 { // franz-go's "unknown": goka then leaves the table's offset as it is
		e.finish(nil, nil)
		return
	}
	e.msg = sarama.ProducerMessage{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}
	e.finish(&e.msg, nil)
}

// Close waits until every record emitted so far is acknowledged or failed (at most
// producerCloseTimeout), then closes the client; a record still buffered then fails.
func (p *producer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), producerCloseTimeout)
	defer cancel()
	err := p.cl.Flush(ctx)
	p.cl.Close()
	if err != nil {
		return fmt.Errorf("kafka: processor producer: flush at close: %w", err)
	}
	return nil
}

// kgoLogger sends franz-go's logs to slog: its warnings and errors as such, its info lines
// (connections, producer ids, metadata) at debug level like goka's own; its debug lines (a
// line per request) never.
type kgoLogger struct{ log *slog.Logger }

func (l kgoLogger) Level() kgo.LogLevel {
	ctx := context.Background()
	switch {
	case l.log.Enabled(ctx, slog.LevelDebug):
		return kgo.LogLevelInfo
	case l.log.Enabled(ctx, slog.LevelWarn):
		return kgo.LogLevelWarn
	case l.log.Enabled(ctx, slog.LevelError):
		return kgo.LogLevelError
	}
	return kgo.LogLevelNone
}

func (l kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelDebug
	switch level {
	case kgo.LogLevelError:
		lv = slog.LevelError
	case kgo.LogLevelWarn:
		lv = slog.LevelWarn
	}
	l.log.Log(context.Background(), lv, msg, keyvals...)
}
