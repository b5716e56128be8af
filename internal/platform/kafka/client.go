package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/topics"
)

// Client is a process's one long-lived franz-go client, with kadm over it, for everything
// that is not a member of a consumer group: creating and verifying topics (EnsureTopics),
// moving a group's offsets (ResetOffsets, PlanReset, CommitReset), emptying a table (Clear),
// reading offset ranges (Read, EndOffset) and producing, synchronously (ProduceSync: the hot
// group's partials and checkpoints, the history queue) or not (Produce: the hot group's loop
// records). A process creates it once from its Config, hands it to whatever needs it and
// closes it at shutdown, after them.
//
// It is not for a consumer group member (processors/hot/history's writer, goka's sarama clients)
// nor for a producer that needs settings of its own (the load generator): those open their
// own with Config.KgoClient.
type Client struct {
	cfg Config
	cl  *kgo.Client
	adm *kadm.Client
}

// NewClient returns the client of cfg's cluster; Close it. It connects lazily: a broker
// that is down fails the calls, not NewClient.
//
// Its producer sends as soon as it can (no linger: a caller waits for its records, or batched
// them itself) and takes batches up to topics.MaxCheckpointBytes, the hot group's largest
// checkpoint. Brokers check a batch against its topic's max.message.bytes: the hot partials and
// checkpoints accept that size; the history queue sends one small snapshot at a time, and
// Clear sends its tombstones in bounded batches (clearBatchBytes). The hot loop's records are
// written asynchronously (Produce), so several of a partition may wait while a request is in
// flight and go in one batch: on the loop topic (of the brokers' default max.message.bytes) a
// batch takes up to 1,000,012 bytes, franz-go's default. It puts a record in its key's
// partition like every producer of rankstream (murmur2: PartitionOf; records without a key all
// go to one partition), or in the partition it names if it was made by InPartition.
func NewClient(cfg Config) (*Client, error) {
	hotLoop := string(cfg.Names.Loop(topics.HotGroup))
	cl, err := cfg.KgoClient(
		kgo.ProducerLinger(0),
		kgo.ProducerBatchMaxBytesFn(func(topic string) int32 {
			if topic == hotLoop {
				return defaultBatchBytes
			}
			return topics.MaxCheckpointBytes
		}),
		kgo.MaxBufferedBytes(4*topics.MaxCheckpointBytes),
		partitionLikeKafka(),
	)
	if err != nil {
		return nil, err
	}
	return &Client{cfg: cfg, cl: cl, adm: kadm.NewClient(cl)}, nil
}

// KgoClient returns a franz-go client of its own for the brokers, with extra options: for a
// consumer group member or a producer with settings of its own. Everything else uses the
// process's Client.
func (c Config) KgoClient(opts ...kgo.Opt) (*kgo.Client, error) {
	all := append([]kgo.Opt{kgo.SeedBrokers(c.Brokers...), kgo.ClientID(c.clientID())}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("kafka: client for %v: %w", c.Brokers, err)
	}
	return cl, nil
}

// Config returns the configuration the client was made from (its names, partitions, ...).
func (c *Client) Config() Config { return c.cfg }

// Admin returns the kadm client over the client.
func (c *Client) Admin() *kadm.Client { return c.adm }

// Ping returns nil when a broker answers a metadata request.
func (c *Client) Ping(ctx context.Context) error { return c.cl.Ping(ctx) }

// Close closes the client; in-flight requests fail.
func (c *Client) Close() { c.cl.Close() }

// ProduceSync stores records and returns once the brokers acknowledged all of them. franz-go
// retries until ctx ends, so a broker that is down holds the caller back instead of losing a
// record.
func (c *Client) ProduceSync(ctx context.Context, recs ...*kgo.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := c.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return fmt.Errorf("kafka: produce to %s: %w", recs[0].Topic, err)
	}
	return nil
}

// defaultBatchBytes is the largest batch the Client sends to the hot loop topic, of the brokers'
// default max.message.bytes (franz-go's default, 1,000,012 bytes).
const defaultBatchBytes = 1_000_012

// Produce hands a record to the client and returns; done is called with nil once the brokers
// acknowledged it, or with the error that failed it (the client retries until ctx ends). It
// blocks only while the client holds its limit of buffered bytes. Records of one partition are
// stored in the order they were handed over.
func (c *Client) Produce(ctx context.Context, r *kgo.Record, done func(*kgo.Record, error)) {
	c.cl.Produce(ctx, r, done)
}

// inPartition marks, in a record's Context, a record that goes to the partition it names.
type inPartition struct{}

// InPartition returns r set to go to partition p instead of its key's partition (Clear's
// tombstones go where the keys they delete are). The mark is a value of r.Context.
func InPartition(r *kgo.Record, p int32) *kgo.Record {
	ctx := r.Context
	if ctx == nil {
		ctx = context.Background()
	}
	r.Context, r.Partition = context.WithValue(ctx, inPartition{}, true), p
	return r
}

// partitionLikeKafka is the partitioner of rankstream's producers (the Client's and the
// processors'): partition.
func partitionLikeKafka() kgo.Opt {
	return kgo.RecordPartitioner(kgo.BasicConsistentPartitioner(func(string) func(*kgo.Record, int) int {
		return partition
	}))
}

// partition is the Client's partitioner: the partition a record names (InPartition), or its
// key's (PartitionOf).
func partition(r *kgo.Record, n int) int {
	if r.Context != nil && r.Context.Value(inPartition{}) != nil {
		return int(r.Partition)
	}
	return int(PartitionOf(string(r.Key), n))
}
