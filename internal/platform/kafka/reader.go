package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rankstream/rankstream/internal/platform/backoff"
)

// fetchMaxBytes bounds one fetch response and each partition's part of it; a broker returns a
// batch larger than that whole anyway. Checkpoints reach topics.MaxCheckpointBytes.
const fetchMaxBytes = 64 << 20

// decompressor decompresses fetched batches (safe for concurrent use).
var decompressor = kgo.DefaultDecompressor()

// fetchWait is how long a broker may hold a fetch while the records asked for are not yet
// readable (not yet replicated).
const fetchWait = 500 * time.Millisecond

// Read calls fn for every record of topic at offsets [from[p], to[p]) of each partition p in
// from, in offset order within a partition, and returns once every range is read; records the
// log no longer holds (retention, compaction) are skipped. The record at to[p]-1 must exist,
// as the last record of a partition always does.
//
// It reads with fetch requests of its own on the Client (no consumer: any number of Reads may
// run at once, each on its own ranges), to each partition's leader, retrying while a leader
// moves or a broker cannot be reached, until ctx ends.
func (c *Client) Read(ctx context.Context, topic string, from, to map[int32]int64, fn func(*kgo.Record) error) error {
	next := map[int32]int64{}
	for p, off := range from {
		if off < to[p] {
			next[p] = off
		}
	}
	wait := backoff.New(50*time.Millisecond, time.Second)
	fresh := false
	for len(next) > 0 {
		details, err := c.topicDetail(ctx, topic, fresh)
		if err == nil {
			err = c.fetch(ctx, details, next, to, fn)
		}
		var fatal fatalError
		switch {
		case err == nil:
			wait.Reset()
			fresh = false
			continue
		case errors.As(err, &fatal):
			return fmt.Errorf("kafka: read %s: %w", topic, fatal.error)
		case ctx.Err() != nil:
			return fmt.Errorf("kafka: read %s: %w", topic, err)
		}
		fresh = true // a leader moved, a broker went away: ask again
		if !wait.Wait(ctx) {
			return fmt.Errorf("kafka: read %s: %w (%w)", topic, ctx.Err(), err)
		}
	}
	return nil
}

// fatalError is a Read error that retrying cannot heal (fn's own, a corrupt batch).
type fatalError struct{ error }

// topicDetail returns topic's metadata (its id, each partition's leader): from the client's
// cache, or fresh from the brokers.
func (c *Client) topicDetail(ctx context.Context, topic string, fresh bool) (kadm.TopicDetail, error) {
	var details kadm.TopicDetails
	var err error
	if fresh {
		details, err = c.listTopics(ctx, topic)
	} else {
		details, err = c.adm.ListTopics(ctx, topic)
	}
	if err != nil {
		return kadm.TopicDetail{}, err
	}
	d, ok := details[topic]
	if !ok {
		return kadm.TopicDetail{}, fmt.Errorf("topic %s: %w", topic, kerr.UnknownTopicOrPartition)
	}
	return d, d.Err
}

// fetch sends one fetch request to the leader of each partition still to read (next), calls fn
// for the records below to and moves next on; a partition read to its end leaves next.
func (c *Client) fetch(ctx context.Context, d kadm.TopicDetail, next, to map[int32]int64, fn func(*kgo.Record) error) error {
	byLeader := map[int32][]int32{}
	for p := range next {
		pd, ok := d.Partitions[p]
		if !ok {
			return fatalError{fmt.Errorf("partition %d: %w", p, kerr.UnknownTopicOrPartition)}
		}
		if pd.Err != nil || pd.Leader < 0 {
			return fmt.Errorf("partition %d has no leader: %w", p, errors.Join(pd.Err, kerr.LeaderNotAvailable))
		}
		byLeader[pd.Leader] = append(byLeader[pd.Leader], p)
	}
	for leader, parts := range byLeader {
		req := kmsg.NewPtrFetchRequest()
		req.MaxWaitMillis, req.MinBytes, req.MaxBytes = int32(fetchWait/time.Millisecond), 1, fetchMaxBytes
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic, rt.TopicID = d.Topic, d.ID // the name up to v12, the id from v13
		for _, p := range parts {
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, next[p], fetchMaxBytes
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, c.cl.Broker(int(leader)))
		if err != nil {
			return err
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			return err
		}
		for _, t := range resp.Topics {
			for i := range t.Partitions {
				if err := c.fetched(ctx, d.Topic, &t.Partitions[i], next, to, fn); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// fetched hands the records of one partition's fetch response below to to fn and moves
// next[partition] on.
func (c *Client) fetched(ctx context.Context, topic string, rp *kmsg.FetchResponseTopicPartition, next, to map[int32]int64, fn func(*kgo.Record) error) error {
	p := rp.Partition
	from, ok := next[p]
	if !ok {
		return nil
	}
	fp, after := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Topic: topic, Partition: p, Offset: from}, rp, decompressor, nil)
	switch {
	case errors.Is(fp.Err, kerr.OffsetOutOfRange):
		// Retention removed the start of the range: go on from the log's start.
		starts, err := c.adm.ListStartOffsets(ctx, topic)
		if err == nil {
			err = starts.Error()
		}
		if err != nil {
			return err
		}
		start, _ := starts.Lookup(topic, p)
		if start.Offset <= from {
			return fatalError{fmt.Errorf("partition %d: offset %d out of range, log start %d", p, from, start.Offset)}
		}
		after = start.Offset
	case fp.Err != nil && len(fp.Records) == 0:
		if kerr.IsRetriable(fp.Err) || errors.Is(fp.Err, kerr.UnknownTopicID) {
			return fmt.Errorf("partition %d: %w", p, fp.Err)
		}
		return fatalError{fmt.Errorf("partition %d: %w", p, fp.Err)}
	}
	for _, r := range fp.Records {
		if r.Offset >= to[p] {
			break
		}
		if err := fn(r); err != nil {
			return fatalError{err}
		}
	}
	if after >= to[p] {
		delete(next, p)
	} else if after > from {
		next[p] = after
	}
	return nil
}

// EndOffset returns a partition's end offset (the offset its next record will get).
func (c *Client) EndOffset(ctx context.Context, topic string, partition int32) (int64, error) {
	ends, err := c.adm.ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return 0, fmt.Errorf("kafka: end offsets of %s: %w", topic, err)
	}
	end, ok := ends.Lookup(topic, partition)
	if !ok {
		return 0, fmt.Errorf("kafka: end offsets of %s: partition %d: %w", topic, partition, kerr.UnknownTopicOrPartition)
	}
	return end.Offset, nil
}
