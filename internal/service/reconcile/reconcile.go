package reconcile

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/processors/scores"
	"github.com/rankstream/rankstream/processors/steps"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// Config is what `rankstream reconcile` compares.
type Config struct {
	Kafka     kafka.Config
	RedisAddr string // as for rankstream process
	Day       board.Day
	// Board, when set, names the score board to compare (one of Boards) and Period its
	// period: a kind (d, w, m, season: the window holding the Day's noon in the board's zone;
	// total) or a kind and id ("h:2026113009", "d:20261130", "season:s1"). Unset: the daily
	// steps of Day.
	Board, Period string
	Boards        []*board.Board
	// StepsRetention is the steps processors' --retention: the expiry of what a repair
	// writes.
	StepsRetention time.Duration
	// Repair rewrites what differs with the sinks' writes, then compares again.
	Repair bool
	// Progress is how often the reading of a table logs its progress (default 5 s).
	Progress time.Duration

	redis goredis.UniversalClient
}

// Classes of differences between Redis and the group table.
const (
	Missing    = "missing"     // the table has it, Redis does not
	Stale      = "stale"       // a step key holding another value than the table's
	Extra      = "extra"       // Redis has it, the table does not (a stranger, a region left)
	WrongOrder = "wrong order" // a board member whose score or reach time (its rank) is not the table's
)

// classes are the classes in the order they are reported.
var classes = []string{Missing, Stale, Extra, WrongOrder}

// Difference is one entry on which Redis and the table disagree.
type Difference struct {
	Class  string
	Key    string // the Redis key
	Member string // the user or member ("" for a step key: it is in Key)
	Want   string // what the table says ("" for an extra)
	Got    string // what Redis holds ("" for a missing)
	user   string // whose entry it is (for the repair)
	scope  string // the score board's scope ("" global)
}

func (d Difference) String() string {
	s := d.Key
	if d.Member != "" {
		s += " " + d.Member
	}
	switch {
	case d.Want == "":
		return s + ": " + d.Got
	case d.Got == "":
		return s + ": want " + d.Want
	}
	return s + ": " + d.Got + ", want " + d.Want
}

// ErrDifferences is returned (wrapped, with the counts) when Redis differs from the table
// (after the repair, with Repair).
var ErrDifferences = errors.New("redis differs from the group table")

// maxExamples is how many differences of each class the report shows.
const maxExamples = 5

// Run compares Redis with the group table cfg names, prints the differences by class
// to out, and with Repair rewrites what differs and compares again. It returns an error
// wrapping ErrDifferences when differences remain.
func Run(ctx context.Context, cfg Config, out io.Writer, log *slog.Logger) error {
	cl, err := kafka.NewClient(cfg.Kafka)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	defer cl.Close()
	if cfg.redis, err = rsredis.Open(cfg.RedisAddr); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	defer cfg.redis.Close()
	var c comparison
	if cfg.Board == "" {
		c, err = stepsComparison(ctx, cl, cfg, log)
	} else {
		c, err = scoresComparison(ctx, cl, cfg, log)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "reconcile %s: %s\n", c.what, c.truthSize)
	diffs, err := c.compare(ctx)
	if err != nil {
		return err
	}
	printDifferences(out, "", diffs)
	if len(diffs) == 0 || !cfg.Repair {
		return differencesErr(diffs)
	}
	n, err := c.repair(ctx, diffs)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "repaired: %d users or members written again\n", n)
	log.Info("reconcile: repaired", "what", c.what, "differences", len(diffs), "rewritten", n)
	if diffs, err = c.compare(ctx); err != nil {
		return err
	}
	printDifferences(out, "after the repair: ", diffs)
	return differencesErr(diffs)
}

func differencesErr(diffs []Difference) error {
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("reconcile: %w: %s", ErrDifferences, countLine(diffs))
}

func countLine(diffs []Difference) string {
	parts := make([]string, 0, len(classes))
	for _, c := range classes {
		parts = append(parts, fmt.Sprintf("%s %d", c, countOf(diffs, c)))
	}
	return strings.Join(parts, ", ")
}

func countOf(diffs []Difference, class string) int {
	n := 0
	for _, d := range diffs {
		if d.Class == class {
			n++
		}
	}
	return n
}

func printDifferences(out io.Writer, prefix string, diffs []Difference) {
	fmt.Fprintf(out, "%s%d differences (%s)\n", prefix, len(diffs), countLine(diffs))
	for _, c := range classes {
		shown := 0
		for _, d := range diffs {
			if d.Class == c && shown < maxExamples {
				fmt.Fprintf(out, "  %-11s %s\n", c, d)
				shown++
			}
		}
		if n := countOf(diffs, c); n > shown {
			fmt.Fprintf(out, "  %-11s ... and %d more\n", c, n-shown)
		}
	}
}

// comparison is one family's comparison: what it compares, and its compare and repair.
type comparison struct {
	what, truthSize string
	compare         func(context.Context) ([]Difference, error)
	// repair rewrites the entries of diffs and returns how many users or members it wrote.
	repair func(context.Context, []Difference) (int, error)
}

// readTable calls fn with every record of a group table's changelog (value nil: a tombstone,
// the key deleted), reading it whole up to the ends seen at start, in offset order within a
// partition (a key's records are in one partition, so its last call carries its latest
// value), and logs the progress every interval.
func readTable(ctx context.Context, cl *kafka.Client, topic string, every time.Duration, log *slog.Logger, fn func(key string, value []byte) error) error {
	starts, err := cl.Admin().ListStartOffsets(ctx, topic)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return fmt.Errorf("reconcile: start offsets of %s: %w", topic, err)
	}
	ends, err := cl.Admin().ListEndOffsets(ctx, topic)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("reconcile: end offsets of %s: %w", topic, err)
	}
	from, to := map[int32]int64{}, map[int32]int64{}
	var total int64
	starts.Each(func(o kadm.ListedOffset) { from[o.Partition] = o.Offset })
	ends.Each(func(o kadm.ListedOffset) { to[o.Partition] = o.Offset; total += o.Offset - from[o.Partition] })
	var read atomic.Int64
	if every <= 0 {
		every = 5 * time.Second
	}
	stop := make(chan struct{})
	defer close(stop)
	began := time.Now()
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				p := obs.ProgressOf(read.Load(), total, time.Since(began))
				log.Info("reconcile: reading the table", "topic", topic, "records", p.Done, "of", total,
					"per_second", int64(p.Rate), "eta", p.ETA.Round(time.Second))
			}
		}
	}()
	err = cl.Read(ctx, topic, from, to, func(r *kgo.Record) error {
		read.Add(1)
		return fn(string(r.Key), r.Value)
	})
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	log.Info("reconcile: table read", "topic", topic, "records", read.Load(), "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// stepsComparison compares the step keys and boards of cfg.Day with the steps table.
func stepsComparison(ctx context.Context, cl *kafka.Client, cfg Config, log *slog.Logger) (comparison, error) {
	truth := map[string]*board.StepUpdate{}
	err := readTable(ctx, cl, string(cfg.Kafka.Names.Table(steps.Group)), cfg.Progress, log, func(user string, v []byte) error {
		delete(truth, user) // this record replaces the user's earlier ones
		if v == nil {
			return nil
		}
		var s steps.State
		if err := s.UnmarshalBinary(v); err != nil {
			return fmt.Errorf("reconcile: steps table, user %q: %w", user, err)
		}
		for _, d := range s.Days {
			if d.Day == cfg.Day && d.Steps >= 0 {
				truth[user] = d.Update(user)
			}
		}
		return nil
	})
	if err != nil {
		return comparison{}, err
	}
	rd := rsredis.NewReader(cfg.redis)
	return comparison{
		what:      "daily steps of " + cfg.Day.String(),
		truthSize: fmt.Sprintf("%d users in the steps table", len(truth)),
		compare: func(ctx context.Context) ([]Difference, error) {
			got, err := rd.StepsDay(ctx, cfg.Day)
			if err != nil {
				return nil, fmt.Errorf("reconcile: %w", err)
			}
			return diffSteps(cfg.Day, truth, got), nil
		},
		repair: func(ctx context.Context, diffs []Difference) (int, error) {
			return repairSteps(ctx, cfg, truth, diffs, log)
		},
	}, nil
}

// diffSteps compares what Redis holds of day d with the table's updates of that day.
func diffSteps(d board.Day, truth map[string]*board.StepUpdate, got rsredis.StepsDay) []Difference {
	var diffs []Difference
	composite := board.DayComposite(d)
	boardKey := func(region string) string {
		if region == "" {
			return rsredis.StepsGlobalBoard(d)
		}
		return rsredis.StepsRegionBoard(region, d)
	}
	show := func(score float64) string {
		steps, ms := composite.Decode(score)
		return fmt.Sprintf("%d steps reached %s", steps, time.UnixMilli(ms).UTC().Format(time.RFC3339Nano))
	}
	for _, user := range slices.Sorted(maps.Keys(truth)) {
		u := truth[user]
		key := rsredis.StepKey(d, user)
		switch v, ok := got.Values[user]; {
		case !ok:
			diffs = append(diffs, Difference{Class: Missing, Key: key, Want: fmt.Sprint(u.Steps), user: user})
		case v != u.Steps:
			diffs = append(diffs, Difference{Class: Stale, Key: key, Want: fmt.Sprint(u.Steps), Got: fmt.Sprint(v), user: user})
		}
		score, err := composite.Encode(u.Steps, u.ReachedMs)
		if err != nil {
			continue // the sink cannot rank it either (it logs it)
		}
		regions := []string{""}
		if u.Region != "" {
			regions = append(regions, u.Region)
		}
		for _, r := range regions {
			switch v, ok := got.Boards[r][user]; {
			case !ok:
				diffs = append(diffs, Difference{Class: Missing, Key: boardKey(r), Member: user, Want: show(score), user: user, scope: r})
			case v != score:
				diffs = append(diffs, Difference{Class: WrongOrder, Key: boardKey(r), Member: user, Want: show(score), Got: show(v), user: user, scope: r})
			}
		}
	}
	for _, user := range slices.Sorted(maps.Keys(got.Values)) {
		if _, ok := truth[user]; !ok {
			diffs = append(diffs, Difference{Class: Extra, Key: rsredis.StepKey(d, user), Got: fmt.Sprint(got.Values[user]), user: user})
		}
	}
	for _, r := range slices.Sorted(maps.Keys(got.Boards)) {
		for _, user := range slices.Sorted(maps.Keys(got.Boards[r])) {
			if u, ok := truth[user]; !ok || r != "" && u.Region != r {
				diffs = append(diffs, Difference{Class: Extra, Key: boardKey(r), Member: user, Got: show(got.Boards[r][user]), user: user, scope: r})
			}
		}
	}
	return diffs
}

// repairSteps removes what Redis holds beyond the table (strangers, regions left, values the
// writer's set-if-greater and ZADD GT would not lower), then writes every differing user's
// day as the processor does, through the steps writer.
func repairSteps(ctx context.Context, cfg Config, truth map[string]*board.StepUpdate, diffs []Difference, log *slog.Logger) (int, error) {
	var keys []string
	members := map[string][]string{}
	users := map[string]bool{}
	for _, d := range diffs {
		users[d.user] = true
		switch {
		case d.Member == "" && d.Class != Missing: // a step key: stale or extra
			keys = append(keys, d.user)
		case d.Member != "" && (d.Class == Extra || d.Class == WrongOrder):
			members[d.scope] = append(members[d.scope], d.user)
		}
	}
	if err := rsredis.RemoveSteps(ctx, cfg.redis, cfg.Day, keys, members); err != nil {
		return 0, fmt.Errorf("reconcile: %w", err)
	}
	w := rsredis.NewStepsWriter(cfg.redis, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Logger: log}, Retention: cfg.StepsRetention})
	var updates []*board.StepUpdate
	for _, user := range slices.Sorted(maps.Keys(users)) {
		if u, ok := truth[user]; ok {
			updates = append(updates, u)
		}
	}
	return len(updates), submitAll(ctx, w, w.Submit, updates)
}

// submitAll runs a sink writer, submits every item and waits until it stored them all.
func submitAll[T any](ctx context.Context, w interface{ Run(context.Context) error }, submit func(T, func(error)), items []T) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- w.Run(runCtx) }()
	left := atomic.Int64{}
	left.Store(int64(len(items)))
	done := make(chan error, 1)
	for _, it := range items {
		submit(it, func(err error) {
			if err != nil {
				select {
				case done <- err:
				default:
				}
			} else if left.Add(-1) == 0 {
				done <- nil
			}
		})
	}
	var err error
	if len(items) > 0 {
		select {
		case err = <-done:
		case err = <-ran:
			if err == nil {
				err = ctx.Err()
			}
		}
	}
	cancel()
	if rerr := <-ran; err == nil && rerr != nil && !errors.Is(rerr, context.Canceled) {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("reconcile: repair: %w", err)
	}
	return nil
}

// scoreWindow resolves cfg.Period on b.
func scoreWindow(b *board.Board, day board.Day, period string) (board.Window, error) {
	p, id, perr := board.ParsePeriod(period)
	if !b.Has(p) {
		return board.Window{}, fmt.Errorf("reconcile: board %s keeps no period %q", b.Name, p)
	}
	if p == board.PeriodTotal {
		w, _ := b.WindowByID(p, string(board.PeriodTotal))
		return w, nil
	}
	if perr != nil || id != "" { // an id no window can have, or one to look up
		if w, ok := b.WindowByID(p, id); ok && perr == nil {
			return w, nil
		}
		return board.Window{}, fmt.Errorf("reconcile: board %s has no window %s", b.Name, period)
	}
	if p == board.PeriodHour {
		return board.Window{}, fmt.Errorf("reconcile: --period h needs the hour (h:yyyymmddhh)")
	}
	date := day.Date()
	noon := time.Date(date.Year(), date.Month(), date.Day(), 12, 0, 0, 0, b.Zone)
	if w, ok := b.Window(p, noon); ok {
		return w, nil
	}
	return board.Window{}, fmt.Errorf("reconcile: board %s has no %s window on %s", b.Name, p, day)
}

// scoresComparison compares the global and scope boards of one period of a score board with
// the scores table.
func scoresComparison(ctx context.Context, cl *kafka.Client, cfg Config, log *slog.Logger) (comparison, error) {
	i := slices.IndexFunc(cfg.Boards, func(b *board.Board) bool { return b.Name == cfg.Board })
	if i < 0 {
		return comparison{}, fmt.Errorf("reconcile: board %q is not in the boards file", cfg.Board)
	}
	b := cfg.Boards[i]
	w, err := scoreWindow(b, cfg.Day, cmp.Or(cfg.Period, "d"))
	if err != nil {
		return comparison{}, err
	}
	truth := map[string]board.ScoreUpdate{}
	err = readTable(ctx, cl, string(cfg.Kafka.Names.Table(scores.Group)), cfg.Progress, log, func(member string, v []byte) error {
		delete(truth, member) // this record replaces the member's earlier ones
		if v == nil {
			return nil
		}
		var s scores.State
		if err := s.UnmarshalBinary(v); err != nil {
			return fmt.Errorf("reconcile: scores table, member %q: %w", member, err)
		}
		for _, bs := range s.Boards {
			if bs.Board != b.Name {
				continue
			}
			for _, u := range bs.Updates(b, member) {
				if u.Period == w.Period && u.PeriodID == w.ID {
					truth[member] = u
				}
			}
		}
		return nil
	})
	if err != nil {
		return comparison{}, err
	}
	ref := rsredis.BoardRef{Board: b.Name, Period: w.Period, PeriodID: w.ID, Shards: b.Shards}
	rd := rsredis.NewReader(cfg.redis)
	return comparison{
		what:      fmt.Sprintf("board %s, %s", b.Name, strings.TrimSuffix(string(w.Period)+":"+w.ID, ":total")),
		truthSize: fmt.Sprintf("%d members in the scores table", len(truth)),
		compare: func(ctx context.Context) ([]Difference, error) {
			got, err := readScoreBoards(ctx, rd, ref)
			if err != nil {
				return nil, err
			}
			return diffScores(ref, truth, got), nil
		},
		repair: func(ctx context.Context, diffs []Difference) (int, error) {
			return repairScores(ctx, cfg, ref, truth, diffs, log)
		},
	}, nil
}

// readScoreBoards reads the global board of ref and every scope board of its period, by
// scope ("" global), member by member.
func readScoreBoards(ctx context.Context, rd *rsredis.Reader, ref rsredis.BoardRef) (map[string]map[string]rsredis.Ranked, error) {
	scopes, err := rd.BoardScopes(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	out := map[string]map[string]rsredis.Ranked{}
	for _, scope := range append([]string{""}, scopes[rsredis.ScopesKey(ref)]...) {
		r := ref
		r.Scope = scope
		m := map[string]rsredis.Ranked{}
		err := rd.ScanBoard(ctx, r, 10_000, func(rs []rsredis.Ranked) error {
			for _, x := range rs {
				m[x.Member] = x
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reconcile: %w", err)
		}
		if len(m) > 0 {
			out[scope] = m
		}
	}
	return out, nil
}

// diffScores compares the boards of one period with the table's entries of that period.
func diffScores(ref rsredis.BoardRef, truth map[string]board.ScoreUpdate, got map[string]map[string]rsredis.Ranked) []Difference {
	var diffs []Difference
	key := func(scope string) string {
		r := ref
		r.Scope = scope
		return rsredis.ScoreBoardPattern(r)
	}
	show := func(score, ms int64) string {
		return fmt.Sprintf("%d reached %s", score, time.UnixMilli(ms).UTC().Format(time.RFC3339Nano))
	}
	for _, member := range slices.Sorted(maps.Keys(truth)) {
		u := truth[member]
		if !u.Present {
			continue
		}
		scopes := []string{""}
		if u.Scope != "" {
			scopes = append(scopes, u.Scope)
		}
		for _, s := range scopes {
			switch x, ok := got[s][member]; {
			case !ok:
				diffs = append(diffs, Difference{Class: Missing, Key: key(s), Member: member, Want: show(u.Score, u.ReachedMs), user: member, scope: s})
			case x.Score != u.Score || x.ReachedMs != u.ReachedMs:
				diffs = append(diffs, Difference{Class: WrongOrder, Key: key(s), Member: member, Want: show(u.Score, u.ReachedMs),
					Got: show(x.Score, x.ReachedMs), user: member, scope: s})
			}
		}
	}
	for _, s := range slices.Sorted(maps.Keys(got)) {
		for _, member := range slices.Sorted(maps.Keys(got[s])) {
			if u, ok := truth[member]; !ok || !u.Present || s != "" && u.Scope != s {
				x := got[s][member]
				diffs = append(diffs, Difference{Class: Extra, Key: key(s), Member: member, Got: show(x.Score, x.ReachedMs), user: member, scope: s})
			}
		}
	}
	return diffs
}

// repairScores writes every differing member's entry as the processor does, through the
// scores writer (absolute writes: a wrong entry is replaced, whatever it holds), removing it
// too from the scope boards it is on and should not be; a member the table does not have is
// removed from every board of the period it is on.
func repairScores(ctx context.Context, cfg Config, ref rsredis.BoardRef, truth map[string]board.ScoreUpdate, diffs []Difference, log *slog.Logger) (int, error) {
	byMember := map[string]*board.ScoreUpdate{}
	for _, d := range diffs {
		u, ok := byMember[d.user]
		if !ok {
			t, known := truth[d.user]
			if !known {
				t = board.ScoreUpdate{Board: ref.Board, Member: d.user, Period: ref.Period, PeriodID: ref.PeriodID}
			}
			t.Left = slices.Clone(t.Left)
			u = &t
			byMember[d.user] = u
		}
		if d.Class == Extra && d.scope != "" && !slices.Contains(u.Left, d.scope) {
			u.Left = append(u.Left, d.scope)
		}
	}
	w := rsredis.NewScoresWriter(cfg.redis, cfg.Boards, rsredis.FlushOptions{Logger: log})
	updates := make([][]board.ScoreUpdate, 0, len(byMember))
	for _, m := range slices.Sorted(maps.Keys(byMember)) {
		updates = append(updates, []board.ScoreUpdate{*byMember[m]})
	}
	return len(updates), submitAll(ctx, w, w.Submit, updates)
}
