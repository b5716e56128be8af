package kafka

import (
	"context"
	"errors"
	"fmt"
	"github.com/rankstream/rankstream/internal/backoff"
	"strings"
	"time"

	"github.com/rankstream/rankstream/topics"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Client returns a franz-go client for the brokers, with extra options.
func (c Config) Client(opts ...kgo.Opt) (*kgo.Client, error) {
	all := append([]kgo.Opt{kgo.SeedBrokers(c.Brokers...), kgo.ClientID(c.clientID())}, opts...)
	cl, err := kgo.NewClient(all...)
	if err != nil {
		return nil, fmt.Errorf("kafka: client for %v: %w", c.Brokers, err)
	}
	return cl, nil
}

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
func (c Config) EnsureTopics(ctx context.Context, create bool) ([]TopicResult, error) {
	// Fresh metadata on every request: the wait for created topics polls it.
	cl, err := c.Client(kgo.MetadataMinAge(10 * time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	specs := c.Names.Specs(c.partitions())
	// All topics, not the named ones: asking for missing topics by name makes the client wait
	// for them to appear.
	details, err := adm.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafka: list topics: %w", err)
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
		resp, err := adm.CreateTopic(ctx, int32(s.Partitions), int16(c.replication()), ptrs(s.Configs), s.Name)
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
	if details, err = waitVisible(ctx, adm, specs, fresh); err != nil {
		return results, err
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	configs, err := adm.DescribeTopicConfigs(ctx, names...)
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
func waitVisible(ctx context.Context, adm *kadm.Client, specs []topics.Spec, fresh map[string]bool) (kadm.TopicDetails, error) {
	var details kadm.TopicDetails
	err := retry(ctx, func() error {
		var err error
		if details, err = adm.ListTopics(ctx); err != nil {
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
