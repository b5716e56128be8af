package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/processors/friends"
	"github.com/rankstream/rankstream/processors/hot"
	"github.com/rankstream/rankstream/processors/scores"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// replayGroups are the groups `rankstream replay --group` knows, each with what its family
// says a replay moves and clears. A family adds itself with one entry.
var replayGroups = map[string]func(topics.Names) kafka.Replay{
	"steps":         steps.Replay,
	"steps-history": steps.HistoryReplay, // writes user_daily_steps again from the steps table
	"hot":           hot.Replay,          // the groups hot and hot-merge
	"scores":        scores.Replay,
	"scores-totals": scores.TotalsReplay, // writes board_member_scores again from the scores table
	"friends":       friends.Replay,
}

// Groups returns the names --group accepts, sorted.
func Groups() []string { return slices.Sorted(maps.Keys(replayGroups)) }

// ErrLiveMembers is returned (wrapped, naming them) when a group to replay has live members.
var ErrLiveMembers = errors.New("the group has live members")

// Config is what `rankstream replay` does.
type Config struct {
	Kafka  kafka.Config
	Group  string       // one of Groups
	Target kafka.Target // zero: the start
	DryRun bool         // show the plan, change nothing
	// Follow shows the progress of the processors (started by the operator) until the groups'
	// committed offsets reach the ends seen when planned.
	Follow bool
	// Terminal draws the progress as a bar rewritten in place (rate and ETA) instead of log
	// lines.
	Terminal bool
	// Poll is how often Follow reads the committed offsets (default 1 s); progress log lines
	// come at most every 10 polls.
	Poll time.Duration
}

// replayMove is one group's planned moves on one topic.
type replayMove struct {
	kafka.GroupTopic
	moves []kafka.Move
}

// Run carries out cfg: it refuses while a group of the replay has live members, prints the
// plan to out (per partition: committed offset → new offset, records to reprocess), and unless
// DryRun moves the offsets, deletes the records of the topics it purges, clears what the
// family's replay clears and, with Follow, shows the progress until the processors caught up
// (or ctx ends).
func Run(ctx context.Context, cfg Config, out io.Writer, log *slog.Logger) error {
	spec, ok := replayGroups[cfg.Group]
	if !ok {
		return fmt.Errorf("replay: unknown group %q (known: %s)", cfg.Group, strings.Join(Groups(), ", "))
	}
	r := spec(cfg.Kafka.Names)
	if r.StartOnly != "" && (!cfg.Target.Time.IsZero() || len(cfg.Target.Offsets) > 0) {
		return fmt.Errorf("replay: group %s replays only from the start (--to-start): %s", cfg.Group, r.StartOnly)
	}
	cl, err := kafka.NewClient(cfg.Kafka)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer cl.Close()
	if err := refuseLive(ctx, cl, r); err != nil {
		return err
	}
	plan := make([]replayMove, 0, len(r.Offsets))
	for _, gt := range r.Offsets {
		moves, err := cl.PlanReset(ctx, string(gt.Group), string(gt.Topic), cfg.Target)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		plan = append(plan, replayMove{gt, moves})
	}
	for _, gt := range r.Purge {
		moves, err := cl.PlanReset(ctx, string(gt.Group), string(gt.Topic), kafka.Target{})
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		for i := range moves {
			moves[i].New = moves[i].End
		}
		plan = append(plan, replayMove{gt, moves})
	}
	printPlan(out, cfg, r, plan)
	if cfg.DryRun {
		fmt.Fprintln(out, "dry run: nothing changed")
		return nil
	}
	// Check again just before moving: a processor started while the plan was made would
	// otherwise have its offsets moved under it (the broker refuses a commit to a group with
	// members only while they hold a generation).
	if err := refuseLive(ctx, cl, r); err != nil {
		return err
	}
	for _, m := range plan {
		if _, err := cl.CommitReset(ctx, string(m.Group), string(m.Topic), m.moves); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
	}
	for _, m := range plan[len(plan)-len(r.Purge):] {
		ends := map[int32]int64{}
		for _, mv := range m.moves {
			ends[mv.Partition] = mv.End
		}
		if err := cl.Purge(ctx, string(m.Topic), ends); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		fmt.Fprintf(out, "purged %s\n", m.Topic)
	}
	for _, t := range r.Clear {
		if err := cl.Clear(ctx, string(t)); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		fmt.Fprintf(out, "cleared %s\n", t)
	}
	fmt.Fprintf(out, "offsets moved: start the processors (rankstream process) to replay %s\n", cfg.Group)
	log.Info("replay: offsets moved", "group", cfg.Group, "records", planRecords(plan))
	if !cfg.Follow {
		return nil
	}
	return follow(ctx, cl, cfg, plan, out, log)
}

// refuseLive returns an error naming the live members of r's groups, if any.
func refuseLive(ctx context.Context, cl *kafka.Client, r kafka.Replay) error {
	var live []string
	seen := map[string]bool{}
	for _, gt := range slices.Concat(r.Offsets, r.Purge) {
		g := string(gt.Group)
		if seen[g] {
			continue
		}
		seen[g] = true
		members, err := cl.Members(ctx, g)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		if len(members) > 0 {
			live = append(live, fmt.Sprintf("%s: %s", g, strings.Join(members, ", ")))
		}
	}
	if len(live) > 0 {
		return fmt.Errorf("replay: %w (stop its processors first): %s", ErrLiveMembers, strings.Join(live, "; "))
	}
	return nil
}

func planRecords(plan []replayMove) (n int64) {
	for _, m := range plan {
		for _, p := range m.moves {
			n += p.Records()
		}
	}
	return n
}

func printPlan(out io.Writer, cfg Config, r kafka.Replay, plan []replayMove) {
	to := "the start"
	switch {
	case !cfg.Target.Time.IsZero():
		to = cfg.Target.Time.UTC().Format(time.RFC3339Nano)
	case len(cfg.Target.Offsets) > 0:
		to = "the offsets given"
	}
	fmt.Fprintf(out, "replay of %s to %s\n", cfg.Group, to)
	offset := func(o int64) string {
		if o < 0 {
			return "none"
		}
		return fmt.Sprint(o)
	}
	for _, m := range plan {
		fmt.Fprintf(out, "group %s on %s\n  %9s %12s    %12s %12s\n", m.Group, m.Topic, "partition", "committed", "new", "records")
		var sum int64
		for _, p := range m.moves {
			fmt.Fprintf(out, "  %9d %12s -> %12s %12d\n", p.Partition, offset(p.Committed), offset(p.New), p.Records())
			sum += p.Records()
		}
		fmt.Fprintf(out, "  %9s %12s    %12s %12d\n", "total", "", "", sum)
	}
	for _, gt := range r.Purge {
		fmt.Fprintf(out, "purges %s: its records are deleted, %s reads on from its end\n", gt.Topic, gt.Group)
	}
	for _, t := range r.Clear {
		fmt.Fprintf(out, "clears %s\n", t)
	}
	fmt.Fprintf(out, "records to reprocess: %d\n", planRecords(plan))
}

// follow polls the groups' committed offsets until every partition with records to
// reprocess reached the end seen when planned.
func follow(ctx context.Context, cl *kafka.Client, cfg Config, plan []replayMove, out io.Writer, log *slog.Logger) error {
	poll := cfg.Poll
	if poll <= 0 {
		poll = time.Second
	}
	total, began := planRecords(plan), time.Now()
	for i := 0; ; i++ {
		done, err := replayed(ctx, cl, plan)
		if err != nil {
			return err
		}
		p := obs.ProgressOf(done, total, time.Since(began))
		switch {
		case cfg.Terminal:
			fmt.Fprintf(out, "\r%s", p.Bar())
		case i%10 == 0 || done == total:
			log.Info("replay: progress", "group", cfg.Group, "records", done, "of", total,
				"per_second", int64(p.Rate), "eta", p.ETA.Round(time.Second))
		}
		if done == total {
			if cfg.Terminal {
				fmt.Fprintln(out)
			}
			fmt.Fprintf(out, "replay of %s caught up: %d records in %s\n", cfg.Group, total, time.Since(began).Round(time.Second))
			return nil
		}
		select {
		case <-ctx.Done():
			if cfg.Terminal {
				fmt.Fprintln(out)
			}
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}

// replayed returns how many of the plan's records the groups have committed.
func replayed(ctx context.Context, cl *kafka.Client, plan []replayMove) (int64, error) {
	var done int64
	for _, m := range plan {
		committed, err := cl.Committed(ctx, string(m.Group), string(m.Topic))
		if err != nil {
			return 0, fmt.Errorf("replay: %w", err)
		}
		for _, p := range m.moves {
			if c, ok := committed[p.Partition]; ok && p.Records() > 0 {
				done += min(max(c-p.New, 0), p.Records())
			}
		}
	}
	return done, nil
}
