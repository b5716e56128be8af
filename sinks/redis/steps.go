package redis

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
)

// setMax stores, for each KEYS[i], ARGV[i+1] unless the key holds a number at least as
// large, and then sets the key to expire at ARGV[1] (unix seconds; a key's expiry depends only
// on its day, so one call takes keys of one day, and a key not raised keeps the one it got).
// Values only grow, so a late or repeated write never lowers what readers see. One call takes
// many keys (setMaxGroups): on a Redis Cluster, keys of one slot. SET ... EXAT (Redis 6.2,
// like ZADD GT) sets value and expiry in one command.
var setMax = goredis.NewScript(`
local exat = ARGV[1]
for i, k in ipairs(KEYS) do
  local v = ARGV[i+1]
  if tonumber(v) > tonumber(redis.call('GET', k) or '-1') then
    redis.call('SET', k, v, 'EXAT', exat)
  end
end
return 0`)

// maxScriptKeys bounds the keys of one setMax call, so that no call holds Redis for long.
const maxScriptKeys = 256

// setMaxGroups splits n step keys into the groups one setMax call may take: at most
// maxScriptKeys keys, all of one group (groupOf: the keys' day, and on a Redis Cluster their
// slot too, for a script must not cross slots), in the order the groups first come. The groups
// are slices of r.order, valid until the next call.
func (r *stepsRoom) setMaxGroups(n int, groupOf func(i int) int) [][]int {
	if r.groupAt == nil {
		r.groupAt = map[int]int{}
	}
	clear(r.groupAt)
	r.sizes = r.sizes[:0]
	r.keyGroup = slices.Grow(r.keyGroup[:0], n)
	for i := range n { // the groups in their order and sizes
		gk := groupOf(i)
		g, ok := r.groupAt[gk]
		if !ok {
			g = len(r.sizes)
			r.groupAt[gk] = g
			r.sizes = append(r.sizes, 0)
		}
		r.keyGroup = append(r.keyGroup, g)
		r.sizes[g]++
	}
	next := 0
	for g, size := range r.sizes { // sizes become where each group's keys go
		r.sizes[g], next = next, next+size
	}
	r.order = slices.Grow(r.order[:0], n)[:n]
	for i, g := range r.keyGroup {
		r.order[r.sizes[g]] = i
		r.sizes[g]++
	}
	r.groups = r.groups[:0]
	for g, start := 0, 0; g < len(r.sizes); g++ { // sizes are now where each group ends
		for end := r.sizes[g]; start < end; {
			k := min(end-start, maxScriptKeys)
			r.groups = append(r.groups, r.order[start:start+k:start+k])
			start += k
		}
	}
	return r.groups
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
	room stepsRoom
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

// stepsRoom is what a flush builds, kept from one flush to the next with its capacity (write
// runs in Run's goroutine only, and a retry builds it again).
type stepsRoom struct {
	text    []byte      // the flush's step keys, steps and scores, one after the other
	rows    []stepsRow  // per user-day, in the batch's order
	strs    []string    // per row its key, member, steps and score: slices of text made a string
	args    []any       // the setMax calls' arguments, one call after the other
	ranked  []rankedRow // the rows ranked on boards, by score once sorted
	days    []stepsDay
	boards  []stepsBoard
	boardAt map[boardRef]int // into boards
	// setMaxGroups' room
	groupAt                map[int]int
	sizes, keyGroup, order []int
	groups                 [][]int
}

// rankedRow is a row ranked on its boards, with its score: a board's members go to its ZADD
// by score, so that redis-server inserts each one next to where it inserted the one before
// (a flush's members in the batch's order cost it about 1.4 times the CPU of sorted ones, on
// a board of 200k members).
type rankedRow struct {
	score float64
	row   int
}

type boardRef struct {
	region string // "" for the global board
	day    board.Day
}

// stepsRow is one user-day of a flush: its pending update, its day (into days), its boards
// (into boards; region -1 for none) and where its texts end in text.
type stepsRow struct {
	p                     *pendingDay
	day, global, region   int
	lo, key, steps, score int32 // score == steps: not ranked
}

// stepsDay is one day of a flush: its key prefix, composite and expiry (unix seconds, as text:
// a day's keys and boards expire together).
type stepsDay struct {
	day       board.Day
	prefix    string
	composite board.Composite
	expiry    int64
	expiryArg string
	global    int // its global board (into boards), -1 until a row needs it
}

// stepsBoard is one board of a flush: its name and its ZADD's arguments (the command's
// included).
type stepsBoard struct {
	ref     boardRef
	name    string
	expiry  int64
	members int
	args    []any
}

// dayOf returns the index in r.days of d, adding it.
func (w *StepsWriter) dayOf(r *stepsRoom, d board.Day) int {
	for i := range r.days {
		if r.days[i].day == d {
			return i
		}
	}
	exp := d.LastInstant().Add(w.opts.Retention).Unix()
	r.days = append(r.days, stepsDay{day: d, prefix: StepKey(d, ""), composite: board.DayComposite(d), expiry: exp,
		expiryArg: strconv.FormatInt(exp, 10), global: -1})
	return len(r.days) - 1
}

// boardIndex returns the index in r.boards of ref, adding it.
func (r *stepsRoom) boardIndex(ref boardRef, expiry int64) int {
	if i, ok := r.boardAt[ref]; ok {
		return i
	}
	name := StepsGlobalBoard(ref.day)
	if ref.region != "" {
		name = StepsRegionBoard(ref.region, ref.day)
	}
	i := len(r.boards)
	if i < cap(r.boards) {
		r.boards = r.boards[:i+1]
		b := &r.boards[i]
		b.ref, b.name, b.expiry, b.members = ref, name, expiry, 0
		b.args = append(b.args[:0], "zadd", name, "gt")
	} else {
		r.boards = append(r.boards, stepsBoard{ref: ref, name: name, expiry: expiry, args: []any{"zadd", name, "gt"}})
	}
	r.boardAt[ref] = i
	return i
}

// reset empties r for the next flush, keeping its room but none of its strings.
func (r *stepsRoom) reset() {
	r.text = r.text[:0]
	clear(r.rows)
	r.rows = r.rows[:0]
	clear(r.strs)
	r.strs = r.strs[:0]
	clear(r.args)
	r.args = r.args[:0]
	r.ranked = r.ranked[:0]
	r.days = r.days[:0]
	for i := range r.boards {
		clear(r.boards[i].args)
	}
	r.boards = r.boards[:0]
	clear(r.boardAt)
}

// write sends one pipeline: set-if-greater of the step keys (setMax, many keys of one day a
// call); per board one ZADD GT of all its members, by score, and one EXPIREAT; ZREM for
// regions users left. It reads the batch once, in memory order, writing every key and number
// as text into one buffer; the commands' arguments are pointers to strings of that text (a
// user's board member is its step key's tail), so that a user-day costs no allocation.
func (w *StepsWriter) write(ctx context.Context, b *asyncBatch[userDay, pendingDay]) error {
	if len(b.items) == 0 {
		return nil
	}
	r := &w.room
	defer r.reset()
	if r.boardAt == nil {
		r.boardAt = map[boardRef]int{}
	}
	n := len(b.items)
	r.rows, r.strs = slices.Grow(r.rows, n), slices.Grow(r.strs, 4*n)
	for p := range b.values() {
		u := &p.u
		row := stepsRow{p: p, day: w.dayOf(r, u.Day), region: -1, lo: int32(len(r.text))}
		d := &r.days[row.day]
		r.text = append(append(r.text, d.prefix...), u.User...)
		row.key = int32(len(r.text))
		r.text = strconv.AppendInt(r.text, u.Steps, 10)
		row.steps = int32(len(r.text))
		// The composite is an integer below 2^53, written as one (what ZADD reads as the same double).
		if score, err := d.composite.Encode(u.Steps, u.ReachedMs); err != nil {
			w.opts.Logger.Error("redis sink: cannot rank update", "user", u.User, "day", u.Day, "err", err)
		} else {
			r.text = strconv.AppendInt(r.text, int64(score), 10)
			r.ranked = append(r.ranked, rankedRow{score, len(r.rows)})
			if d.global < 0 {
				d.global = r.boardIndex(boardRef{"", u.Day}, d.expiry)
			}
			row.global = d.global
			r.boards[row.global].members++
			if u.Region != "" {
				row.region = r.boardIndex(boardRef{u.Region, u.Day}, d.expiry)
				r.boards[row.region].members++
			}
		}
		row.score = int32(len(r.text))
		r.rows = append(r.rows, row)
	}
	text := string(r.text)
	for i := range r.rows {
		row := &r.rows[i]
		plen := int32(len(r.days[row.day].prefix))
		r.strs = append(r.strs, text[row.lo:row.key], text[row.lo+plen:row.key], text[row.key:row.steps], text[row.steps:row.score])
	}
	for i := range r.boards {
		bd := &r.boards[i]
		bd.args = slices.Grow(bd.args, 2*bd.members)
	}
	// r.strs is complete: pointers into it stay valid until the pipeline ran.
	pipe := w.rdb.Pipeline()
	slices.SortFunc(r.ranked, func(a, b rankedRow) int { return cmp.Compare(a.score, b.score) })
	for _, rk := range r.ranked {
		row := &r.rows[rk.row]
		member, score := &r.strs[4*rk.row+1], &r.strs[4*rk.row+3]
		g := &r.boards[row.global]
		g.args = append(g.args, score, member)
		if row.region >= 0 {
			rb := &r.boards[row.region]
			rb.args = append(rb.args, score, member)
		}
		u := &row.p.u
		for _, l := range row.p.left {
			if l != u.Region {
				pipe.ZRem(ctx, StepsRegionBoard(l, u.Day), u.User)
			}
		}
	}
	_, cluster := w.rdb.(*goredis.ClusterClient)
	groupOf := func(i int) int { return r.rows[i].day }
	if cluster {
		groupOf = func(i int) int { return KeySlot(r.strs[4*i])*len(r.days) + r.rows[i].day }
	}
	sha := setMax.Hash()
	groups := r.setMaxGroups(len(r.rows), groupOf)
	r.args = slices.Grow(r.args, 4*len(groups)+2*len(r.rows)) // no reallocation below: calls share it
	for _, g := range groups {
		lo := len(r.args)
		r.args = append(r.args, "evalsha", sha, len(g))
		for _, i := range g {
			r.args = append(r.args, &r.strs[4*i])
		}
		r.args = append(r.args, &r.days[r.rows[g[0]].day].expiryArg)
		for _, i := range g {
			r.args = append(r.args, &r.strs[4*i+2])
		}
		cmd := goredis.NewCmd(ctx, r.args[lo:len(r.args):len(r.args)]...)
		cmd.SetFirstKeyPos(3)
		_ = pipe.Process(ctx, cmd)
	}
	for i := range r.boards {
		bd := &r.boards[i]
		pipe.Do(ctx, bd.args...)
		pipe.ExpireAt(ctx, bd.name, time.Unix(bd.expiry, 0))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("redis sink: pipeline of %d user-days: %w", len(r.rows), err)
	}
	return nil
}
