package kafka

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/rankstream/rankstream/internal/platform/backoff"
	"github.com/rankstream/rankstream/topics"
)

// TopicResult says what EnsureTopics did with one topic.
type TopicResult struct {
	Name    string
	Created bool
	// Problem is set when an existing topic does not match its spec.
	Problem string
}

// ErrTopicMismatch is returned by EnsureTopics when an existing topic differs from its spec in
// a way that breaks rankstream (partition count, compaction).
var ErrTopicMismatch = errors.New("kafka: topic does not match its spec")

// EnsureTopics creates every topic rankstream needs (topics.Names.Specs), waits until each one
// is in the brokers' metadata with all its partitions led, and verifies them: partition counts
// (co-partitioning depends on them) and compaction of tables. With create=false it only
// verifies. Instances started at the same moment may race to create a topic: one of them
// creates it, the others get TopicAlreadyExists, which is fine; every one of them then waits
// for the topic and verifies it, so none starts a processor on a topic its broker does not
// know yet. Only a mismatch (ErrTopicMismatch) means that retrying cannot help.
func (c *Client) EnsureTopics(ctx context.Context, create bool) ([]TopicResult, error) {
	specs := c.cfg.Names.Specs(c.cfg.partitions())
	details, err := c.listTopics(ctx)
	if err != nil {
		return nil, err
	}
	results := make([]TopicResult, len(specs))
	var missing []string
	fresh := map[string]bool{} // created now, by this call or another instance's
	for i, s := range specs {
		results[i].Name = s.Name
		if d, ok := details[s.Name]; ok && d.Err == nil {
			continue
		}
		fresh[s.Name] = true
		if !create {
			results[i].Problem = "missing"
			missing = append(missing, s.Name+": missing")
			continue
		}
		resp, err := c.adm.CreateTopic(ctx, int32(s.Partitions), int16(c.cfg.replication()), ptrs(s.Configs), s.Name)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			return results, fmt.Errorf("kafka: create topic %s: %w", s.Name, err)
		}
		results[i].Created = err == nil
	}
	if len(missing) > 0 {
		return results, fmt.Errorf("%w: %s", ErrTopicMismatch, strings.Join(missing, "; "))
	}
	if details, err = c.waitVisible(ctx, specs, fresh); err != nil {
		return results, err
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	configs, err := c.adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return results, fmt.Errorf("kafka: describe topic configs: %w", err)
	}
	var problems []string
	for i, s := range specs {
		if results[i].Problem = verify(s, details[s.Name], configs); results[i].Problem != "" {
			problems = append(problems, s.Name+": "+results[i].Problem)
		}
	}
	if len(problems) > 0 {
		return results, fmt.Errorf("%w: %s", ErrTopicMismatch, strings.Join(problems, "; "))
	}
	return results, nil
}

// waitVisible waits until every topic of specs is in the brokers' metadata, each partition with
// a leader, the fresh ones (just created) with all the partitions of their spec, and returns
// the details: creation returns before every broker knows the topic (also to an instance whose
// creation failed with TopicAlreadyExists because another one was faster), and a processor
// started before that would not find it. The partition count of a topic that existed before is
// final: verify reports a difference.
func (c *Client) waitVisible(ctx context.Context, specs []topics.Spec, fresh map[string]bool) (kadm.TopicDetails, error) {
	var details kadm.TopicDetails
	err := retry(ctx, func() error {
		var err error
		if details, err = c.listTopics(ctx); err != nil {
			return err
		}
		for _, s := range specs {
			d, ok := details[s.Name]
			if !ok || d.Err != nil {
				return fmt.Errorf("%w: topic %s not yet visible", errNotYet, s.Name)
			}
			if fresh[s.Name] && len(d.Partitions) < s.Partitions {
				return fmt.Errorf("%w: topic %s has %d of %d partitions", errNotYet, s.Name, len(d.Partitions), s.Partitions)
			}
			for _, p := range d.Partitions {
				if p.Err != nil || p.Leader < 0 {
					return fmt.Errorf("%w: topic %s partition %d has no leader yet", errNotYet, s.Name, p.Partition)
				}
			}
		}
		return nil
	})
	return details, err
}

// listTopics returns the details of the named topics, or of every topic without names, from a
// metadata request of its own: kadm's ListTopics answers from the client's metadata cache, up
// to 5 s old (kgo.MetadataMinAge), which would hide a topic just created or deleted.
// EnsureTopics asks for all topics, not the ones it needs: asking for missing topics by name
// makes the client wait for them to appear.
func (c *Client) listTopics(ctx context.Context, names ...string) (kadm.TopicDetails, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, n := range names {
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(n)
		req.Topics = append(req.Topics, t)
	}
	resp, err := req.RequestWith(ctx, c.cl)
	if err != nil {
		return nil, fmt.Errorf("kafka: list topics: %w", err)
	}
	details := make(kadm.TopicDetails, len(resp.Topics))
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		d := kadm.TopicDetail{Topic: *t.Topic, ID: kadm.TopicID(t.TopicID), IsInternal: t.IsInternal,
			Partitions: make(kadm.PartitionDetails, len(t.Partitions)), Err: kerr.ErrorForCode(t.ErrorCode)}
		for _, p := range t.Partitions {
			d.Partitions[p.Partition] = kadm.PartitionDetail{Topic: *t.Topic, Partition: p.Partition, Leader: p.Leader,
				LeaderEpoch: p.LeaderEpoch, Replicas: p.Replicas, ISR: p.ISR, OfflineReplicas: p.OfflineReplicas,
				Err: kerr.ErrorForCode(p.ErrorCode)}
		}
		details[d.Topic] = d
	}
	return details, nil
}

// errNotYet marks a condition that settles by itself; retry waits for it.
var errNotYet = errors.New("not yet")

// retry calls fn until it succeeds, fails with an error that is not retriable, or 30 seconds
// pass. Retriable are Kafka's own retriable errors (a coordinator still loading, say) and
// errNotYet.
func retry(ctx context.Context, fn func() error) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	retriable := func(err error) bool { return errors.Is(err, errNotYet) || kerr.IsRetriable(err) }
	if err := backoff.Retry(ctx, backoff.New(50*time.Millisecond, time.Second), retriable, nil, fn); err != nil {
		return fmt.Errorf("kafka: %w", err)
	}
	return nil
}

func verify(s topics.Spec, d kadm.TopicDetail, configs kadm.ResourceConfigs) string {
	if n := len(d.Partitions); n != s.Partitions {
		return fmt.Sprintf("%d partitions, want %d", n, s.Partitions)
	}
	if !s.Compact {
		return ""
	}
	rc, err := configs.On(s.Name, nil)
	if err != nil {
		return "cannot read its configs: " + err.Error()
	}
	for _, cfg := range rc.Configs {
		if cfg.Key == "cleanup.policy" && !strings.Contains(cfg.MaybeValue(), "compact") {
			return fmt.Sprintf("cleanup.policy=%s, want compact", cfg.MaybeValue())
		}
	}
	return ""
}

func ptrs(m map[string]string) map[string]*string {
	out := make(map[string]*string, len(m))
	for k, v := range m {
		out[k] = &v
	}
	return out
}
