package kafka

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/IBM/sarama"
	"github.com/lovoo/goka"
	"github.com/lovoo/goka/storage"

	"github.com/rankstream/rankstream/topics"
)

// Config is where Kafka is and how rankstream's topics are laid out.
type Config struct {
	Brokers []string
	// Partitions of every co-partitioned topic; 0 means topics.DefaultPartitions.
	Partitions int
	// Replication of created topics; 0 means 1 (a single local broker).
	Replication int
	// ClientID names this process to the brokers.
	ClientID string
	// Names puts topics and groups in a namespace (a prefix); the zero value uses the
	// contract's names.
	Names topics.Names
	// StateDir keeps goka's local table copies (LevelDB) across restarts; empty keeps them in
	// memory and recovers them from the changelog on every start.
	StateDir string
}

func (c Config) partitions() int {
	if c.Partitions > 0 {
		return c.Partitions
	}
	return topics.DefaultPartitions
}

func (c Config) replication() int {
	if c.Replication > 0 {
		return c.Replication
	}
	return 1
}

// Sarama returns the sarama configuration goka's consumers and topic manager run on (its
// producer is franz-go's: producerBuilder): goka's defaults, plus the protocol version,
// reading new groups from the oldest offset (a new group must not skip what was produced
// before it joined), fetches of 256 KiB a partition, a fetch that waits at most fetchMaxWait
// for data, and the metadata of the topics used only.
func (c Config) Sarama() *sarama.Config {
	s := goka.DefaultConfig()
	// Kafka 4 removed the old protocol versions (KIP-896): goka's default (2.0) fails there.
	s.Version = sarama.V3_6_0_0
	s.ClientID = c.clientID()
	s.Consumer.Offsets.Initial = sarama.OffsetOldest
	// What the callbacks finished is committed within this (plus fetchMaxWait, below): a
	// commit is one small write to __consumer_offsets, sent only when an offset moved.
	s.Consumer.Offsets.AutoCommit.Interval = 100 * time.Millisecond
	// sarama keeps a whole fetch of a partition parsed (every record's message, about 160
	// bytes, and its decompressed batches) until the last of its records is handed on:
	// sarama's 1 MiB a partition kept about 46 MB on the heap in the steps slice's 8
	// partitions, 256 KiB about 18 MB, which the collector's headroom doubles. 64 KiB saved
	// 35 MiB of the steps slice's peak RSS, but stalled the hot group: sarama fetches all the
	// partitions a broker leads together and waits for every partition's records to be handed
	// on before the next fetch, and a hot callback waiting for another input partition's
	// watermark (align) kept its partition's records from being handed on, so the partition
	// it waited for got no new data either: in the traces the partitions resumed one every 2 s.
	// BenchmarkHotThroughput took 14 s instead of 1.2 s in 3 of 11 runs at 64 KiB, none of 8
	// at 256 KiB (2026-12-01, execution traces).
	s.Consumer.Fetch.Default = 256 << 10
	s.Consumer.MaxWaitTime = fetchMaxWait
	// Only the topics a client uses: by default every client (goka's consumer group and
	// consumer of each processor) keeps, and refreshes every minute, the metadata of every
	// topic of the cluster, tens of MB on a cluster of thousands of partitions. The topic
	// manager too asks for its topics only (topicManager).
	s.Metadata.Full = false
	s.Metadata.RefreshFrequency = time.Minute
	return s
}

// fetchMaxWait is how long a fetch with nothing to return waits at the broker for data
// (sarama's Consumer.MaxWaitTime, 500 ms by default). sarama holds a broker's lock from
// sending a fetch until its answer, and a group's offset commits and heartbeats go to the same
// broker object: a commit due while a fetch waits for data waits for that fetch (sarama
// offsetManager.flushToBroker takes the lock). So once the input was consumed, the last commit
// went out up to this long after its auto-commit tick: BenchmarkHotThroughput's timed part
// ended 570-1090 ms after the pipeline's last callback, its last commits blocked 190-500 ms on
// that lock (execution traces; 0-135 ms at 100 ms). While records flow a fetch returns at
// once, so this changes nothing but an idle consumer's polls (10 a second instead of 2).
const fetchMaxWait = 100 * time.Millisecond

func (c Config) clientID() string {
	if c.ClientID != "" {
		return c.ClientID
	}
	return "rankstream"
}

// ProcessorOptions configures a goka processor of group g on this cluster. Its commits follow
// offset order (commitOrder); hooks run before each callback, with its context (a benchmark
// times the callbacks with them).
func (c Config) ProcessorOptions(g goka.Group, log *slog.Logger, hooks ...func(goka.Context)) []goka.ProcessorOption {
	s := c.Sarama()
	order := &commitOrder{}
	sb := memoryBuilder()
	if c.StateDir != "" {
		sb = storage.DefaultBuilder(filepath.Join(c.StateDir, string(g)))
	}
	return []goka.ProcessorOption{
		goka.WithConsumerGroupBuilder(order.groupBuilder(goka.ConsumerGroupBuilderWithConfig(s))),
		goka.WithContextWrapper(order.contextWrapper(hooks)),
		goka.WithConsumerSaramaBuilder(goka.SaramaConsumerBuilderWithConfig(s)),
		goka.WithProducerBuilder(c.producerBuilder(log.With("group", string(g)))),
		goka.WithHasher(NewMurmur2),
		goka.WithTopicManagerBuilder(topicManagerBuilder(s)),
		goka.WithStorageBuilder(sb),
		goka.WithClientID(c.clientID()),
		goka.WithLogger(gokaLogger{log.With("component", "goka", "group", string(g))}),
		// Tombstones (null values) reach the callbacks, which dead-letter them: goka's default
		// commits them unseen and uncounted.
		goka.WithNilHandling(goka.NilProcess),
	}
}

// gokaLogger sends goka's printf-style logs to slog at debug level: goka logs every
// partition state change, which is noise at info level.
type gokaLogger struct{ log *slog.Logger }

func (l gokaLogger) Print(v ...any)                 { l.log.Debug(fmt.Sprint(v...)) }
func (l gokaLogger) Println(v ...any)               { l.log.Debug(fmt.Sprint(v...)) }
func (l gokaLogger) Printf(format string, v ...any) { l.log.Debug(fmt.Sprintf(format, v...)) }
