package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ResetOffsets moves a consumer group's committed offsets on topic: to the start of each
// partition when at is zero, otherwise to the first record whose timestamp is at or after
// at. The group must have no running members (stop its processors first). It returns the
// offsets committed.
func (c *Client) ResetOffsets(ctx context.Context, group goka.Group, topic goka.Stream, at time.Time) (kadm.Offsets, error) {
	members, err := c.Members(ctx, string(group))
	if err != nil {
		return nil, err
	}
	if len(members) > 0 {
		return nil, fmt.Errorf("kafka: group %s has %d running members (%s); stop them before resetting its offsets", group, len(members), strings.Join(members, ", "))
	}
	moves, err := c.PlanReset(ctx, string(group), string(topic), Target{Time: at})
	if err != nil {
		return nil, err
	}
	return c.CommitReset(ctx, string(group), string(topic), moves)
}

// Members returns the live members of a consumer group, each as "client-id@host (member
// id)", sorted; none for a group that is empty or never existed.
func (c *Client) Members(ctx context.Context, group string) ([]string, error) {
	var groups kadm.DescribedGroups
	err := retry(ctx, func() error {
		var err error
		if groups, err = c.adm.DescribeGroups(ctx, group); err == nil {
			err = groups.Error()
		}
		if errors.Is(err, kerr.GroupIDNotFound) {
			return nil // a group that never committed: nothing runs in it
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kafka: describe group %s: %w", group, err)
	}
	var out []string
	for _, m := range groups[group].Members {
		out = append(out, fmt.Sprintf("%s@%s (%s)", m.ClientID, m.ClientHost, m.MemberID))
	}
	slices.Sort(out)
	return out, nil
}

// Target is where a reset moves a group's offsets: the start of every partition (Time zero
// and no Offsets), the first record at or after Time, or the offsets named (Offsets, by
// partition: the partitions not named keep their committed offset).
type Target struct {
	Time    time.Time
	Offsets map[int32]int64
}

// Move is one partition's planned reset: the offset committed now (-1: none), the new one,
// and the end of the partition when planned.
type Move struct {
	Partition           int32
	Committed, New, End int64
}

// Records is what the group reads again (or for the first time) from the new offset to the
// end seen when planned; none for a partition left where it is uncommitted (New -1).
func (m Move) Records() int64 {
	if m.New < 0 {
		return 0
	}
	return max(m.End-m.New, 0)
}

// PlanReset returns the moves that would reset group's offsets on topic to target, by
// partition, without changing anything. An offset named beyond a partition's end, or a
// partition the topic does not have, is an error; one below the start moves to the start.
func (c *Client) PlanReset(ctx context.Context, group, topic string, target Target) ([]Move, error) {
	starts, err := c.adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	var ends, at kadm.ListedOffsets
	if err == nil {
		ends, err = c.adm.ListEndOffsets(ctx, topic)
	}
	if err == nil {
		err = ends.Error()
	}
	if err == nil && !target.Time.IsZero() {
		if at, err = c.adm.ListOffsetsAfterMilli(ctx, target.Time.UnixMilli(), topic); err == nil {
			err = at.Error()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("kafka: list offsets of %s: %w", topic, err)
	}
	committed, err := c.Committed(ctx, group, topic)
	if err != nil {
		return nil, err
	}
	var moves []Move
	ends.Each(func(e kadm.ListedOffset) {
		s, _ := starts.Lookup(topic, e.Partition)
		m := Move{Partition: e.Partition, Committed: -1, New: s.Offset, End: e.Offset}
		if o, ok := committed[e.Partition]; ok {
			m.Committed = o
		}
		switch o, named := target.Offsets[e.Partition]; {
		case named:
			m.New = max(o, s.Offset)
		case len(target.Offsets) > 0:
			m.New = m.Committed
		case !target.Time.IsZero():
			a, _ := at.Lookup(topic, e.Partition)
			m.New = a.Offset
		}
		moves = append(moves, m)
	})
	slices.SortFunc(moves, func(a, b Move) int { return int(a.Partition - b.Partition) })
	for p, o := range target.Offsets {
		i := slices.IndexFunc(moves, func(m Move) bool { return m.Partition == p })
		if i < 0 {
			return nil, fmt.Errorf("kafka: %s has no partition %d", topic, p)
		}
		if o > moves[i].End {
			return nil, fmt.Errorf("kafka: offset %d is beyond the end of %s partition %d (%d)", o, topic, p, moves[i].End)
		}
	}
	return moves, nil
}

// Committed returns group's committed offsets on topic by partition (absent: none).
func (c *Client) Committed(ctx context.Context, group, topic string) (map[int32]int64, error) {
	var resp kadm.OffsetResponses
	err := retry(ctx, func() error {
		var err error
		if resp, err = c.adm.FetchOffsets(ctx, group); err == nil {
			err = resp.Error()
		}
		if errors.Is(err, kerr.GroupIDNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kafka: committed offsets of group %s: %w", group, err)
	}
	out := map[int32]int64{}
	for p, o := range resp[topic] {
		if o.At >= 0 {
			out[p] = o.At
		}
	}
	return out, nil
}

// CommitReset commits the new offsets of moves (planned by PlanReset) for group on topic; a
// move without a new offset (-1: a partition never committed and not named) is left out. The
// group must have no live members: the broker refuses the commit otherwise.
func (c *Client) CommitReset(ctx context.Context, group, topic string, moves []Move) (kadm.Offsets, error) {
	offsets := kadm.Offsets{}
	for _, m := range moves {
		if m.New >= 0 {
			offsets.Add(kadm.Offset{Topic: topic, Partition: m.Partition, At: m.New, LeaderEpoch: -1})
		}
	}
	err := retry(ctx, func() error {
		resp, err := c.adm.CommitOffsets(ctx, group, offsets)
		if err == nil {
			err = resp.Error()
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("kafka: commit offsets of group %s: %w", group, err)
	}
	return offsets, nil
}

// Purge deletes the records of topic before the offsets to, by partition (DeleteRecords: the
// topic's cleanup.policy must be delete).
func (c *Client) Purge(ctx context.Context, topic string, to map[int32]int64) error {
	offsets := kadm.Offsets{}
	for part, at := range to {
		offsets.Add(kadm.Offset{Topic: topic, Partition: part, At: at, LeaderEpoch: -1})
	}
	err := retry(ctx, func() error {
		resp, err := c.adm.DeleteRecords(ctx, offsets)
		if err == nil {
			err = resp.Error()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("kafka: delete the records of %s: %w", topic, err)
	}
	return nil
}

// clearBatchBytes bounds the keys of the tombstones Clear sends at once, so that no batch
// exceeds a table's max.message.bytes (1 MiB by default) although the Client's producer takes
// batches up to topics.MaxCheckpointBytes.
const clearBatchBytes = 256 << 10

// Clear empties a compacted topic (a processor's checkpoints or table) by writing a tombstone
// for every key whose latest value is not one; readers that restore from it (goka's table
// recovery, the hot group's checkpoints) then find nothing. Brokers refuse DeleteRecords on
// compacted topics, hence tombstones. Nothing may write to the topic meanwhile.
func (c *Client) Clear(ctx context.Context, topic string) error {
	starts, err := c.adm.ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	var ends kadm.ListedOffsets
	if err == nil {
		ends, err = c.adm.ListEndOffsets(ctx, topic)
	}
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("kafka: clear %s: %w", topic, err)
	}
	from, to := map[int32]int64{}, map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		s, _ := starts.Lookup(topic, o.Partition)
		from[o.Partition], to[o.Partition] = s.Offset, o.Offset
	})
	live := map[int32]map[string]bool{}
	err = c.Read(ctx, topic, from, to, func(r *kgo.Record) error {
		if live[r.Partition] == nil {
			live[r.Partition] = map[string]bool{}
		}
		live[r.Partition][string(r.Key)] = r.Value != nil
		return nil
	})
	if err != nil {
		return fmt.Errorf("kafka: clear %s: %w", topic, err)
	}
	var batch []*kgo.Record
	size := 0
	for part, keys := range live {
		for k, alive := range keys {
			if !alive {
				continue
			}
			batch = append(batch, InPartition(&kgo.Record{Topic: topic, Key: []byte(k)}, part))
			if size += len(k) + 64; size >= clearBatchBytes {
				if err := c.ProduceSync(ctx, batch...); err != nil {
					return fmt.Errorf("kafka: clear %s: %w", topic, err)
				}
				batch, size = batch[:0], 0
			}
		}
	}
	if err := c.ProduceSync(ctx, batch...); err != nil {
		return fmt.Errorf("kafka: clear %s: %w", topic, err)
	}
	return nil
}
