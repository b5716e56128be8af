package kafka

import (
	"errors"
	"fmt"

	"github.com/IBM/sarama"
	"github.com/lovoo/goka"
)

// topicManager is the goka.TopicManager every processor is built with: it checks that the
// topics a processor uses exist, with the partition count the processor needs, and asks Kafka
// for the metadata of those topics only. goka's own manager refreshed the metadata of every
// topic of the cluster for each topic it looked up (a processor looks up its input, loop and
// table topics when built, and again at each assignment): about 8.6 ms of broker CPU each on a
// broker of 3,000 partitions against 0.9 ms for one topic (100 requests of each, measured on
// the test broker with a scratch client), on the same cores as the pipeline in the
// benchmarks. It never creates a topic (EnsureTopics creates, waits for and verifies every
// topic before any processor starts; goka's manager, racing with another instance's
// EnsureTopics, failed with "topic already exists"): a topic that is missing, or has another
// partition count than the processor's co-partitioned topics, is an error (goka's manager,
// configured not to create, ignored a partition mismatch by default).
type topicManager struct {
	client sarama.Client
}

// topicManagerBuilder builds topicManager on sarama configuration s (Sarama's: the metadata of
// the topics used only) with automatic topic creation off, so that looking a missing topic up
// does not create it on a broker that allows that.
func topicManagerBuilder(s *sarama.Config) goka.TopicManagerBuilder {
	scoped := *s
	scoped.Metadata.AllowAutoTopicCreation = false
	return func(brokers []string) (goka.TopicManager, error) {
		client, err := sarama.NewClient(brokers, &scoped)
		if err != nil {
			return nil, fmt.Errorf("kafka: topic manager: %w", err)
		}
		return &topicManager{client: client}, nil
	}
}

// Partitions returns the partitions of topic, from a metadata request for topic alone (a
// cached answer might predate a change of the partition count).
func (m *topicManager) Partitions(topic string) ([]int32, error) {
	if err := m.client.RefreshMetadata(topic); err != nil {
		if errors.Is(err, sarama.ErrUnknownTopicOrPartition) {
			return nil, fmt.Errorf("kafka: topic %s does not exist (`rankstream topics` creates it): %w", topic, err)
		}
		return nil, fmt.Errorf("kafka: metadata of topic %s: %w", topic, err)
	}
	return m.client.Partitions(topic)
}

// EnsureStreamExists checks that stream topic exists with npar partitions.
func (m *topicManager) EnsureStreamExists(topic string, npar int) error { return m.ensure(topic, npar) }

// EnsureTableExists checks that table topic exists with npar partitions (EnsureTopics verified
// that it is compacted).
func (m *topicManager) EnsureTableExists(topic string, npar int) error { return m.ensure(topic, npar) }

// EnsureTopicExists checks that topic exists with npar partitions; rfactor and config are
// EnsureTopics' to verify.
func (m *topicManager) EnsureTopicExists(topic string, npar, _ int, _ map[string]string) error {
	return m.ensure(topic, npar)
}

func (m *topicManager) ensure(topic string, npar int) error {
	partitions, err := m.Partitions(topic)
	if err != nil {
		return err
	}
	if len(partitions) != npar {
		return fmt.Errorf("kafka: topic %s has %d partitions, its processor's topics %d", topic, len(partitions), npar)
	}
	return nil
}

// GetOffset returns the offset of topic's partition at time (sarama.OffsetOldest or
// sarama.OffsetNewest: where a table's partition starts and ends).
func (m *topicManager) GetOffset(topic string, partition int32, time int64) (int64, error) {
	return m.client.GetOffset(topic, partition, time)
}

// Close closes the manager's client.
func (m *topicManager) Close() error { return m.client.Close() }
