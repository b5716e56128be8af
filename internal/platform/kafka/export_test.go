package kafka

import (
	"log/slog"

	"github.com/lovoo/goka"
)

// NewProcessorProducer is the producer ProcessorOptions gives goka.
func (c Config) NewProcessorProducer(log *slog.Logger) (goka.Producer, error) {
	return c.producerBuilder(log)(c.Brokers, c.clientID(), NewMurmur2)
}

// NewTopicManager is the topic manager ProcessorOptions gives goka.
func (c Config) NewTopicManager() (goka.TopicManager, error) {
	return topicManagerBuilder(c.Sarama())(c.Brokers)
}
