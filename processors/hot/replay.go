package hot

import (
	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/topics"
)

// Replay is what a replay of the hot groups (hot and hot-merge, stopped) does to recompute
// every snapshot from the retained queries: the hot group's offsets on the queries go back to
// the start; the loop topic and the partials, which the replay writes again from the queries,
// are purged (their records deleted, the offsets at their ends), and the hot group's
// checkpoints and the merge group's table are emptied, so nothing of the previous run is used
// and each replay reads the queries alone: none of the loop beyond what it routes itself. The
// snapshots come out the same: windows close on event time.
func Replay(n topics.Names) kafka.Replay {
	return kafka.Replay{
		Offsets: []kafka.GroupTopic{{Group: n.Group(Group), Topic: n.Stream(topics.SearchQueries)}},
		Purge: []kafka.GroupTopic{
			{Group: n.Group(Group), Topic: n.Loop(Group)},
			{Group: n.Group(topics.HotMergeGroup), Topic: n.Stream(topics.HotPartials)},
		},
		Clear: []goka.Stream{n.Stream(topics.HotCheckpoints), goka.Stream(n.Table(topics.HotMergeGroup))},
		StartOnly: "a window is rebuilt from all the queries it holds, the loop and the partials have no " +
			"offsets matching a time of the queries, and the checkpoints are cleared",
	}
}
