package hot

import (
	"context"
	"fmt"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/internal/kafka"
	"github.com/rankstream/rankstream/topics"
)

// Replay prepares the hot groups (stopped) to recompute every snapshot from the retained
// queries: their offsets on the queries, the loop and the partials go back to the start, and
// the hot group's checkpoints and the merge group's table are emptied, so nothing of the
// previous run is used. The snapshots come out the same: windows close on event time.
func Replay(ctx context.Context, cl *kafka.Client) error {
	kc := cl.Config()
	for _, r := range []struct {
		group  goka.Group
		stream goka.Stream
	}{
		{Group, kc.Names.Stream(topics.SearchQueries)},
		{Group, kc.Names.Loop(Group)},
		{topics.HotMergeGroup, kc.Names.Stream(topics.HotPartials)},
	} {
		if _, err := cl.ResetOffsets(ctx, kc.Names.Group(r.group), r.stream, time.Time{}); err != nil {
			return fmt.Errorf("hot replay: %w", err)
		}
	}
	for _, t := range []string{string(kc.Names.Stream(topics.HotCheckpoints)), string(kc.Names.Table(topics.HotMergeGroup))} {
		if err := cl.Clear(ctx, t); err != nil {
			return fmt.Errorf("hot replay: %w", err)
		}
	}
	return nil
}
