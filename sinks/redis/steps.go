package redis

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/board"
)

// setMax stores, for each KEYS[i], ARGV[2i-1] unless the key holds a number at least as
// large, with its expiry at ARGV[2i] (unix seconds) in the same SET (one write a raised key,
// not a SET and an EXPIREAT; a key's expiry depends only on its day, so a key not raised keeps
// the one it got). Values only grow, so a late or repeated write never lowers what readers
// see. One call takes many keys (setMaxGroups): on a Redis Cluster, keys of one slot.
var setMax = goredis.NewScript(`
for i, k in ipairs(KEYS) do
  local v = tonumber(ARGV[2*i-1])
  if v > tonumber(redis.call('GET', k) or '-1') then
    redis.call('SET', k, ARGV[2*i-1], 'EXAT', ARGV[2*i])
  end
end
return 0`)

// maxScriptKeys bounds the keys of one setMax call, so that no call holds Redis for long.
const maxScriptKeys = 256

// setMaxGroups splits step keys into the groups one setMax call may take: at most
// maxScriptKeys keys, all of one slot when cluster is true (a script must not cross slots).
func setMaxGroups(keys []string, cluster bool) [][]int {
	bySlot := map[int][]int{}
	var order []int
	for i, k := range keys {
		slot := 0
		if cluster {
			slot = KeySlot(k)
		}
		g, ok := bySlot[slot]
		if !ok {
			order = append(order, slot)
		}
		bySlot[slot] = append(g, i)
	}
	var groups [][]int
	for _, slot := range order {
		for g := bySlot[slot]; len(g) > 0; {
			n := min(len(g), maxScriptKeys)
			groups = append(groups, g[:n:n])
			g = g[n:]
		}
	}
	return groups
}

// StepsOptions configure a StepsWriter; zero fields take the defaults.
type StepsOptions struct {
	FlushOptions // coalesced per user and day
	// Retention is how long after a day's last possible instant its keys live; default 7 days.
	Retention time.Duration
}

func (o *StepsOptions) defaults() {
	o.FlushOptions.defaults()
	if o.Retention <= 0 {
		o.Retention = 7 * 24 * time.Hour
	}
}

type userDay struct {
	user string
	day  board.Day
}

// pendingDay is the coalesced update of one user-day and every region the user left.
type pendingDay struct {
	u    board.StepUpdate
	left []string
}

// StepsWriter writes daily step values and boards: step:{day}:{user} (set-if-greater),
// rank:steps:global:{day} and rank:steps:region:{region}:{day} (ZADD GT with the day's
// composite score). It coalesces updates per user and day, flushes them in one pipeline per
// interval, retries a failed flush with backoff for as long as it takes, and only then calls
// the done callbacks, oldest first.
type StepsWriter struct {
	rdb  goredis.UniversalClient
	opts StepsOptions
	q    *async[userDay, pendingDay, *board.StepUpdate]
}

// NewStepsWriter returns a writer on rdb. Call Run to start flushing.
func NewStepsWriter(rdb goredis.UniversalClient, opts StepsOptions) *StepsWriter {
	opts.defaults()
	w := &StepsWriter{rdb: rdb, opts: opts}
	w.q = newAsync(opts.async("redis-steps"), addStep, w.write, func(p *pendingDay) int64 { return p.u.ReachedMs })
	w.q.retried = func(ctx context.Context, err error) {
		if goredis.HasErrorPrefix(err, "NOSCRIPT") { // Redis lost the script cache (a restart, SCRIPT FLUSH)
			if lerr := setMax.Load(ctx, w.rdb).Err(); lerr != nil {
				w.opts.Logger.Warn("redis sink: reload script", "err", lerr)
			}
		}
	}
	return w
}

// Submit queues u (nil: nothing to write) and done. It blocks while MaxPending records wait.
func (w *StepsWriter) Submit(u *board.StepUpdate, done func(error)) { w.q.submit(u, done) }

// addStep coalesces u into the pending user-days.
func addStep(b *asyncBatch[userDay, pendingDay], u *board.StepUpdate) {
	if u == nil {
		return
	}
	k := userDay{u.User, u.Day}
	p, ok := b.items[k]
	if !ok {
		p = b.alloc()
		b.items[k] = p
	}
	for _, r := range u.Left {
		if !slices.Contains(p.left, r) {
			p.left = append(p.left, r)
		}
	}
	if !ok || better(u, &p.u) {
		p.u = *u
	}
}

// better tells whether a ranks above b: more steps, or as many reached earlier. Values only
// improve, so coalescing keeps the best one even if a redelivery submits an older value late.
func better(a, b *board.StepUpdate) bool {
	return a.Steps > b.Steps || a.Steps == b.Steps && a.ReachedMs <= b.ReachedMs
}

// Run flushes every Interval (or sooner when a batch is full) until ctx is cancelled, then
// makes one last attempt to flush what is queued. Cancel ctx only after the processor that
// submits has stopped.
//
// A flush retries until it succeeds or ctx ends. If it fails, its records and every record
// submitted after it get an error (never an acknowledgement: the commit is a high-water
// mark), and Run returns that error: the records are not committed, and processor and writer
// must be started again together.
func (w *StepsWriter) Run(ctx context.Context) error {
	if err := setMax.Load(ctx, w.rdb).Err(); err != nil {
		w.opts.Logger.Warn("redis sink: load script (retried with the first flush)", "err", err)
	}
	return w.q.run(ctx)
}

// Err returns the first failure of the writer: a write that failed, or a record submitted
// after it stopped. nil means every submitted record was written and acknowledged (or is
// still queued).
func (w *StepsWriter) Err() error { return w.q.err() }

// write sends one pipeline: set-if-greater of the step keys (setMax, many keys a call); per board one
// ZADD GT of all its members and one EXPIREAT; ZREM for regions users left. The numbers and
// members go to go-redis as pointers (into days, alive until the write returns, and into
// arrays made once per flush), and the step keys share one string, so that a user-day costs
// few allocations.
func (w *StepsWriter) write(ctx context.Context, days map[userDay]*pendingDay) error {
	if len(days) == 0 {
		return nil
	}
	type boardRef struct {
		region string // "" for the global board
		day    board.Day
	}
	list := make([]*pendingDay, 0, len(days))
	scores := make([]float64, 0, len(days))
	ranked := make([]bool, 0, len(days))
	members := map[boardRef]int{}
	keyBytes := 0
	for _, p := range days {
		u := &p.u
		score, err := board.DayComposite(u.Day).Encode(u.Steps, u.ReachedMs)
		if err != nil {
			w.opts.Logger.Error("redis sink: cannot rank update", "user", u.User, "day", u.Day, "err", err)
		} else {
			members[boardRef{"", u.Day}]++
			if u.Region != "" {
				members[boardRef{u.Region, u.Day}]++
			}
		}
		list = append(list, p)
		scores = append(scores, score)
		ranked = append(ranked, err == nil)
		keyBytes += len(StepKey(u.Day, "")) + len(u.User)
	}

	// Per day its expiry (unix seconds: a day's keys and boards expire together); per board
	// its ZADD, sized for its members.
	expiry := map[board.Day]*int64{}
	expiryOf := func(d board.Day) *int64 {
		exp, ok := expiry[d]
		if !ok {
			exp = new(d.LastInstant().Add(w.opts.Retention).Unix())
			expiry[d] = exp
		}
		return exp
	}
	zadds := make(map[boardRef][]any, len(members))
	for ref, n := range members {
		name := StepsGlobalBoard(ref.day)
		if ref.region != "" {
			name = StepsRegionBoard(ref.region, ref.day)
		}
		zadds[ref] = append(make([]any, 0, 3+2*n), "zadd", name, "gt")
	}

	pipe := w.rdb.Pipeline()
	var text strings.Builder // every step key, one after the other
	text.Grow(keyBytes)
	ends := make([]int, len(list))
	for i, p := range list {
		u := &p.u
		text.WriteString(StepKey(u.Day, ""))
		text.WriteString(u.User)
		ends[i] = text.Len()
		if !ranked[i] {
			continue // its step key only
		}
		g := boardRef{"", u.Day}
		zadds[g] = append(zadds[g], &scores[i], &u.User)
		if u.Region != "" {
			r := boardRef{u.Region, u.Day}
			zadds[r] = append(zadds[r], &scores[i], &u.User)
		}
		for _, r := range p.left {
			if r != u.Region {
				pipe.ZRem(ctx, StepsRegionBoard(r, u.Day), u.User)
			}
		}
	}
	keys := make([]string, len(list))
	all, start := text.String(), 0
	for i, end := range ends {
		keys[i], start = all[start:end], end
	}
	_, cluster := w.rdb.(*goredis.ClusterClient)
	for _, g := range setMaxGroups(keys, cluster) {
		gk, ga := make([]string, len(g)), make([]any, 0, 2*len(g))
		for i, k := range g {
			gk[i] = keys[k]
			ga = append(ga, &list[k].u.Steps, expiryOf(list[k].u.Day))
		}
		setMax.EvalSha(ctx, pipe, gk, ga...)
	}
	for ref, args := range zadds {
		pipe.Do(ctx, args...)
		pipe.ExpireAt(ctx, args[1].(string), time.Unix(*expiryOf(ref.day), 0))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redis sink: pipeline of %d user-days: %w", len(days), err)
	}
	return nil
}
