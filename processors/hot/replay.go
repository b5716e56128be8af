package hot

import (
	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/internal/kafka"
	"github.com/rankstream/rankstream/topics"
)

// Replay is what a replay of the hot groups (hot and hot-merge, stopped) does to recompute
// every snapshot from the retained queries: their offsets on the queries, the loop and the
// partials go back to the start, and the hot group's checkpoints and the merge group's table
// are emptied, so nothing of the previous run is used. The snapshots come out the same:
// windows close on event time.
func Replay(n topics.Names) kafka.Replay {
	return kafka.Replay{
		Offsets: []kafka.GroupTopic{
			{Group: n.Group(Group), Topic: n.Stream(topics.SearchQueries)},
			{Group: n.Group(Group), Topic: n.Loop(Group)},
			{Group: n.Group(topics.HotMergeGroup), Topic: n.Stream(topics.HotPartials)},
		},
		Clear: []goka.Stream{n.Stream(topics.HotCheckpoints), goka.Stream(n.Table(topics.HotMergeGroup))},
		StartOnly: "a window is rebuilt from all the queries it holds, the loop and the partials have no " +
			"offsets matching a time of the queries, and the checkpoints are cleared",
	}
}
