package friends

import (
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/topics"
)

// Replay is what a replay of the friends group (stopped) moves: its offsets on the input. Its
// table and its loop topic's offsets stay: applying an op again changes nothing (Apply is
// idempotent), and every replayed op hands its pair's state as the table holds it to the
// store (absolute) and sends it to the other side again, so a replay from the start or from
// any time or offset rewrites what the store lost and leaves it as the first run did.
func Replay(n topics.Names) kafka.Replay {
	return kafka.Replay{Offsets: []kafka.GroupTopic{{Group: n.Group(Group), Topic: n.Stream(topics.FriendsChanged)}}}
}
