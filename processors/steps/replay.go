package steps

import (
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/topics"
)

// Replay is what a replay of the steps group (stopped) moves: its offsets on the reports. Its
// table stays: merging a report again changes nothing (Apply is idempotent), and the first
// record of each user's day after the restart writes the day's whole value to the store
// (absolute values), so a replay from the start or from any time or offset within the
// retention leaves the store as the first run did, and rewrites what it lost.
func Replay(n topics.Names) kafka.Replay {
	return kafka.Replay{Offsets: []kafka.GroupTopic{{Group: n.Group(Group), Topic: n.Stream(topics.StepsReported)}}}
}
