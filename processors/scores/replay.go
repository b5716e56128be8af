package scores

import (
	"github.com/rankstream/rankstream/internal/kafka"
	"github.com/rankstream/rankstream/topics"
)

// Replay is what a replay of the scores group (stopped) moves: its offsets on the ops. Its
// table stays, so every op replayed is a duplicate that hands its entries as the table keeps
// them (a banned member's removed), and a ban stays a ban.
func Replay(n topics.Names) kafka.Replay {
	return kafka.Replay{Offsets: []kafka.GroupTopic{{Group: n.Group(Group), Topic: n.Stream(topics.ScoresUpdated)}}}
}
