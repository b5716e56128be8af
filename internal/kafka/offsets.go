package kafka

import (
	"context"
	"errors"
	"fmt"
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
	var groups kadm.DescribedGroups
	err := retry(ctx, func() error {
		var err error
		if groups, err = c.adm.DescribeGroups(ctx, string(group)); err == nil {
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
	if g, ok := groups[string(group)]; ok && len(g.Members) > 0 {
		return nil, fmt.Errorf("kafka: group %s has %d running members; stop them before resetting its offsets", group, len(g.Members))
	}
	var listed kadm.ListedOffsets
	if at.IsZero() {
		listed, err = c.adm.ListStartOffsets(ctx, string(topic))
	} else {
		listed, err = c.adm.ListOffsetsAfterMilli(ctx, at.UnixMilli(), string(topic))
	}
	if err == nil {
		err = listed.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("kafka: list offsets of %s: %w", topic, err)
	}
	offsets := listed.Offsets()
	err = retry(ctx, func() error {
		resp, err := c.adm.CommitOffsets(ctx, string(group), offsets)
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
