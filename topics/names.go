package topics

import (
	"strconv"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/board"
)

// Input streams and the dead-letter topic (contract: see docs/contract.md).
const (
	StepsReported  goka.Stream = "steps.reported"
	ScoresUpdated  goka.Stream = "scores.updated"
	SearchQueries  goka.Stream = "search.queries"
	FriendsChanged goka.Stream = "friends.changed"
	DLQ            goka.Stream = "rankstream.dlq"
	// ScoresQuarantine holds the score ops fair play set aside (original bytes, the
	// dead-letter headers with the reason; key = member id) and, as the audit of the
	// operators' actions, every ban, unban and release op applied.
	ScoresQuarantine goka.Stream = "scores.quarantine"
	// StepsQuarantine holds the step reports that rose faster than a human walks (original
	// bytes, the dead-letter headers with the reason; key = user id).
	StepsQuarantine goka.Stream = "steps.quarantine"
	// HotPartials carries each partition's partial Top-K per window end, keyed by the window
	// end, from the hot-search processor to its merge step.
	HotPartials goka.Stream = "hot.partials"
	// HotCheckpoints keeps, per partition of the hot group, the latest checkpoint of its
	// window state (compacted; one key per partition).
	HotCheckpoints goka.Stream = "hot.checkpoints"
	// HotHistory queues every published hot-search snapshot (JSON, keyed by its window end) for
	// the history store: group HotHistoryGroup writes it to ClickHouse and commits only after
	// the insert, so a history store that is down delays history, never the snapshots in Redis.
	HotHistory goka.Stream = "hot.history"
)

// DefaultPartitions is the partition count of every co-partitioned topic (inputs and group
// tables) unless the operator chooses another one. All topics read by one goka group must have
// the same count, so there is exactly one knob.
const DefaultPartitions = 8

// QuarantineRetention keeps the quarantine topics (the operators' audit among them) as long
// as the longest board retention.
const QuarantineRetention = board.MaxRetention

// DefaultStreamRetention keeps input streams long enough to replay a week of traffic plus a
// margin; goka's own default (1 hour) would make replays impossible.
const DefaultStreamRetention = 14 * 24 * time.Hour

// MaxDLQMessageBytes is the dead-letter topic's max.message.bytes: brokers check it against a
// batch's compressed size.
const MaxDLQMessageBytes = 2 << 20

// MaxProduceBytes is the largest batch (before compression) the processors' producer sends to
// a topic whose max.message.bytes is MaxDLQMessageBytes: MaxDLQMessageBytes less 1/128. LZ4 (the producer's
// codec) grows incompressible data by at most 1/255 plus a few dozen bytes, so even a batch of
// random bytes stays under the dead-letter topic's limit once compressed.
const MaxProduceBytes = MaxDLQMessageBytes - MaxDLQMessageBytes/128

// InputCompression is the input topics' compression.type. Brokers check a batch's compressed
// size against max.message.bytes, so with the default ("producer") a producer using zstd or
// gzip can land a value of hundreds of MB on a 1 MiB topic (300 MB of zeros in a trial), which
// every consumer then decompresses whole. With snappy the broker recompresses any other codec
// to snappy before it checks the size: snappy expands at most about 21 times, so no input
// record or batch decompresses to more than about 21 MiB. Producers using snappy (franz-go's
// default) are stored as sent.
const InputCompression = "snappy"

// MaxCheckpointBytes is the largest hot-search checkpoint record: a window's state is about
// 80 KiB with the default sketch shape, and wider sketches stay well below this.
const MaxCheckpointBytes = 16 << 20

// Spec describes one topic as `rankstream topics` creates and verifies it.
type Spec struct {
	Name       string
	Partitions int
	// Compact marks a goka group table (changelog): cleanup.policy=compact.
	Compact bool
	// Configs are extra topic configs, e.g. retention.ms.
	Configs map[string]string
}

// Names maps the logical topic and group names above to the ones used on a cluster. The
// zero value uses them as they are; a Prefix puts a whole deployment (or a test) in its own
// namespace on a shared cluster.
type Names struct{ Prefix string }

// Stream returns the cluster name of a stream.
func (n Names) Stream(s goka.Stream) goka.Stream { return goka.Stream(n.Prefix + string(s)) }

// Group returns the cluster name of a processor group.
func (n Names) Group(g goka.Group) goka.Group { return goka.Group(n.Prefix + string(g)) }

// Loop returns the loop topic of a processor group, as goka names it (its default suffix).
func (n Names) Loop(g goka.Group) goka.Stream { return goka.Stream(string(n.Group(g)) + "-loop") }

// Table returns the changelog topic of a processor group, as goka names it.
func (n Names) Table(g goka.Group) goka.Table { return goka.GroupTable(n.Group(g)) }

// Processor groups (logical names; Names.Group gives the cluster names).
const (
	// StepsGroup keeps each user's daily state in its table.
	StepsGroup goka.Group = "steps"
	// ScoresGroup keeps each member's state on every declared board in its table.
	ScoresGroup goka.Group = "scores"
	// HotGroup repartitions search queries by term through its loop topic and keeps a
	// sliding-window sketch per partition.
	HotGroup goka.Group = "hot"
	// HotMergeGroup merges the partitions' partial Top-K lists per window, in its table.
	HotMergeGroup goka.Group = "hot-merge"
	// HotHistoryGroup writes the snapshots of HotHistory to the history store (a franz-go
	// consumer group, not a goka processor: it keeps no state).
	HotHistoryGroup goka.Group = "hot-history"
	// StepsHistoryGroup writes the daily steps history from the steps group's table (its
	// changelog) to the history store (a franz-go consumer group: it keeps no state).
	StepsHistoryGroup goka.Group = "steps-history"
	// FriendsGroup keeps each user's friend set in its table; an op reaches the other user of
	// the pair through its loop topic.
	FriendsGroup goka.Group = "friends"
	// ScoresTotalsGroup writes every member's scores from the changelog of ScoresGroup's
	// table to the history store (a franz-go consumer group, not a goka processor).
	ScoresTotalsGroup goka.Group = "scores-totals"
)

// Specs returns every topic rankstream needs, with the given partition count for the
// co-partitioned ones: the streams, the hot group's loop topic, and the groups' tables as
// compacted changelogs.
func (n Names) Specs(partitions int) []Spec {
	retention := map[string]string{"retention.ms": msString(DefaultStreamRetention)}
	input := map[string]string{"retention.ms": msString(DefaultStreamRetention), "compression.type": InputCompression}
	specs := []Spec{
		{Name: string(n.Stream(StepsReported)), Partitions: partitions, Configs: input},
		{Name: string(n.Stream(ScoresUpdated)), Partitions: partitions, Configs: input},
		{Name: string(n.Stream(SearchQueries)), Partitions: partitions, Configs: input},
		{Name: string(n.Stream(FriendsChanged)), Partitions: partitions, Configs: input},
		{Name: string(n.Stream(DLQ)), Partitions: partitions, Configs: map[string]string{
			"retention.ms":      msString(DefaultStreamRetention),
			"max.message.bytes": strconv.Itoa(MaxDLQMessageBytes),
		}},
	}
	for _, q := range []goka.Stream{ScoresQuarantine, StepsQuarantine} {
		specs = append(specs, Spec{Name: string(n.Stream(q)), Partitions: partitions, Configs: map[string]string{
			"retention.ms":      msString(QuarantineRetention),
			"max.message.bytes": strconv.Itoa(MaxDLQMessageBytes),
		}})
	}
	specs = append(specs, Spec{Name: string(n.Stream(HotPartials)), Partitions: partitions, Configs: map[string]string{
		"retention.ms":      msString(DefaultStreamRetention),
		"max.message.bytes": strconv.Itoa(MaxCheckpointBytes), // written by the same producer as checkpoints
	}})
	specs = append(specs, Spec{Name: string(n.Loop(HotGroup)), Partitions: partitions, Configs: retention})
	specs = append(specs, Spec{Name: string(n.Loop(FriendsGroup)), Partitions: partitions, Configs: retention})
	specs = append(specs, Spec{Name: string(n.Stream(HotHistory)), Partitions: partitions, Configs: retention})
	specs = append(specs, Spec{Name: string(n.Stream(HotCheckpoints)), Partitions: partitions, Compact: true,
		Configs: map[string]string{"cleanup.policy": "compact", "max.message.bytes": strconv.Itoa(MaxCheckpointBytes)}})
	for _, g := range []goka.Group{StepsGroup, ScoresGroup, HotMergeGroup} {
		specs = append(specs, Spec{
			Name: string(n.Table(g)), Partitions: partitions, Compact: true,
			Configs: map[string]string{"cleanup.policy": "compact"},
		})
	}
	// A user's friend set (up to 5,000 friends and the removals it remembers) is one table
	// value of up to about 1 MiB: the limit of what the processors' producer sends.
	specs = append(specs, Spec{Name: string(n.Table(FriendsGroup)), Partitions: partitions, Compact: true,
		Configs: map[string]string{"cleanup.policy": "compact", "max.message.bytes": strconv.Itoa(MaxDLQMessageBytes)}})
	return specs
}

func msString(d time.Duration) string { return strconv.Itoa(int(d / time.Millisecond)) }
