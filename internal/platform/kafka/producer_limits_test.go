package kafka

import (
	"testing"

	"github.com/rankstream/rankstream/topics"
)

// TestProducerBatchBytes: the processors' producer sends batches up to topics.MaxProduceBytes
// only to the topics made to take them; a table's changelog of the brokers' default limit
// gets batches of that default, or a backlog's batch would be refused.
func TestProducerBatchBytes(t *testing.T) {
	c := Config{Names: topics.Names{Prefix: "p."}}
	limit := c.batchBytes()
	for _, tc := range []struct {
		topic string
		want  int32
	}{
		{string(c.Names.Stream(topics.DLQ)), topics.MaxProduceBytes},
		{string(c.Names.Stream(topics.StepsQuarantine)), topics.MaxProduceBytes},
		{string(c.Names.Table(topics.FriendsGroup)), topics.MaxProduceBytes},
		{string(c.Names.Table(topics.StepsGroup)), defaultBatchBytes},
		{string(c.Names.Loop(topics.FriendsGroup)), defaultBatchBytes},
		{"elsewhere", defaultBatchBytes},
	} {
		if got := limit(tc.topic); got != tc.want {
			t.Errorf("%s: %d bytes, want %d", tc.topic, got, tc.want)
		}
	}
}
