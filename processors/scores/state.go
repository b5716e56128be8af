package scores

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rankstream/rankstream/board"
)

// MaxRequests bounds the request ids remembered per member and board. Ids are also forgotten
// once their op's ts leaves the board's retention (a retry that old is refused as too old).
//
// Past the bound the id of the op with the oldest ts is forgotten, and the board remembers
// that ts as its floor: an op whose id is not remembered and whose ts is at or before the
// floor is refused with ErrForgotten (it may be a retry of a forgotten id), never applied a
// second time. So a retry carrying its original ts is never applied twice, whatever the
// bound; a retry carrying another ts is recognised while its id is among the MaxRequests
// newest (by ts) of the member on that board within the retention.
const MaxRequests = 1024

// MaxScopesPerPeriod bounds the distinct scopes one member may be ranked in during one period
// of a board (the current one and every one it left). An op that would move the member to
// one more is refused with ErrTooManyScopes.
const MaxScopesPerPeriod = 16

// Errors of Apply: the op is refused and the record goes to the dead-letter topic with the
// error as its reason. No entry changes. The request id of an op refused for the state it
// met (ErrOutOfRange on an entry, ErrTooManyScopes) is remembered, so that a redelivery, or a
// retry with the same id, decides the same whatever came after it (Result.Changed then says
// to write the state back); the other refusals depend on the op and the record time only, and
// record nothing.
var (
	ErrTooOld        = errors.New("scores: ts older than the board's retention")
	ErrTooNew        = errors.New("scores: ts further ahead than the allowed future skew")
	ErrOutOfRange    = fmt.Errorf("scores: score would leave [-%d, %d]", board.MaxScore, board.MaxScore)
	ErrForgotten     = errors.New("scores: request id not remembered and its ts is not after the newest forgotten id's: it may have been applied already")
	ErrTooManyScopes = fmt.Errorf("scores: more than %d distinct scopes for one member in one period", MaxScopesPerPeriod)
	ErrBadOp         = errors.New("scores: unknown op")
	// ErrBanned refuses a set, incr or delete of a member banned from the board (the
	// dead-letter reason starts with "banned").
	ErrBanned = errors.New("banned")
)

// Fair-play refusals (board.FairPlay): the op is quarantined, not applied, and the member is
// frozen on the board: their entries stay as they are, and every later set or incr is
// quarantined too (ErrFrozen) until a release or a ban. Like the other refusals for the state
// met, the op's request id is used up. Quarantined tells them from the other errors.
var (
	ErrMaxIncr = errors.New("max_incr")
	ErrMaxRate = errors.New("max_rate")
	ErrFrozen  = errors.New("frozen")
)

// Quarantined tells whether err is a fair-play refusal: the record goes to the quarantine
// topic, not the dead-letter topic.
func Quarantined(err error) bool {
	return errors.Is(err, ErrMaxIncr) || errors.Is(err, ErrMaxRate) || errors.Is(err, ErrFrozen)
}

// RateMinutes is how many minutes of event time a member's op counts are kept per board for
// max_rate: the minute of the newest op and the 59 before it. An op older than that counts in
// the oldest kept minute, so going back in ts never escapes the limit.
const RateMinutes = 60

// Kind is what an op does.
type Kind uint8

// Kinds of ops.
const (
	Set     Kind = iota + 1 // the score becomes Op.Score
	Incr                    // the score grows by Op.Score (which may be negative)
	Delete                  // the member leaves every period of the board
	Ban                     // Delete, and every later set, incr or delete is refused (ErrBanned)
	Unban                   // lifts a ban; the member starts again from nothing
	Release                 // lifts a freeze; the member's entries go on from where they were
)

func (k Kind) String() string {
	switch k {
	case Set:
		return "set"
	case Incr:
		return "incr"
	case Delete:
		return "delete"
	case Ban:
		return "ban"
	case Unban:
		return "unban"
	case Release:
		return "release"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Op is a validated score op reduced to what the state needs.
type Op struct {
	RequestHash uint64
	Member      string
	Kind        Kind
	Score       int64
	TSMs        int64
	Scope       string // "": the op names none (the period keeps its scope)
}

// Request is a remembered request id and the ts of its op.
type Request struct {
	Hash uint64
	TSMs int64
}

// Entry is a member's state on one period of a board.
type Entry struct {
	Period board.Period
	ID     string
	EndMs  int64 // the window's end, epoch ms; 0 for total
	// Present is false after a delete: the entry stays (until its period expires) so that a
	// redelivered delete removes the member again from every board it was on.
	Present bool
	Score   int64
	// ReachedMs is the ts of the op that produced Score: it breaks ties on the boards. An op
	// that leaves the score as it was (a set to the same value, an incr by 0) keeps it.
	ReachedMs int64
	// Scope is the scope board the member is on besides the global one: that of the latest op
	// naming one. Left are the scopes it was on before in this period, sorted.
	Scope string
	Left  []string
}

// BoardState is a member's state on one board.
type BoardState struct {
	Board string
	// Entries are sorted by period (in the order of board.Periods), then id.
	Entries []Entry
	// Requests are the remembered request ids, sorted by ts, then hash.
	Requests []Request
	// FloorMs is the newest ts of a forgotten request id (math.MinInt64: none): an op with
	// an unknown id is applied only if its ts is after it.
	FloorMs int64
	// Banned: the member was banned from the board (Ban) and not unbanned since.
	Banned bool
	// Frozen: an op of the member broke the board's fair play, and no operator released or
	// banned them since; their set and incr ops are quarantined.
	Frozen bool
	// Rate are the member's op counts per minute of event time, sorted by minute, spanning
	// less than RateMinutes; only on a board with max_rate.
	Rate []RateMinute
}

// RateMinute counts the applied set and incr ops of a member in one minute of event time
// (epoch minutes, UTC) and the points they rose by (FairPlay.MaxRatePoints).
type RateMinute struct {
	Minute, Ops, Points int64
}

// State is a member's group-table value: its state on every board it has ops on, sorted by
// board name.
type State struct {
	Boards []BoardState
}

// Outcome says what an op did.
type Outcome int

// Outcomes of Apply.
const (
	Applied   Outcome = iota // the op was applied and its request id recorded
	Duplicate                // the request id was applied before: nothing changed
)

func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Duplicate:
		return "duplicate"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// Result is what Apply did.
type Result struct {
	Outcome Outcome
	// Updates are the member's entries, after the op, on the periods it names (every period
	// of the board for a delete), for the store. A duplicate returns them too, as they are:
	// its redelivery may follow a crash between the table's write and the store's; so does an
	// op refused with ErrForgotten (a replay of an op whose id was forgotten since), the only
	// refusal with updates.
	Updates []board.ScoreUpdate
	// Changed tells that the state differs from before the call (an applied op, or expired
	// periods and ids pruned): it must be written back.
	Changed bool
}

// Apply applies op of board b to the state. recordMs is the Kafka record's timestamp: the
// retention (b.Retention) and the future skew are measured from it, so a replay decides the
// same; periods whose boards expired and ids older than the retention are pruned first.
//
// Rules: set makes the score of every period holding op.TSMs (on b) op.Score; incr adds
// op.Score to each (a period the member is not in starts from 0); delete removes the member
// from every period of the board it is in, and a later op brings it back from 0. A request id
// applied once changes nothing afterwards, whatever the retry carries. An op that would put
// any period's score outside [-board.MaxScore, board.MaxScore] is refused whole.
//
// Fair play (b.FairPlay): a set or incr that rises more than MaxIncr (an incr by its amount;
// a set by how far it lifts the member above their best present score on the periods it
// names, from 0 when on none), or that would make the member's ops in its minute of event
// time more than MaxRateOps or their rises more than MaxRatePoints, is refused (ErrMaxIncr,
// ErrMaxRate) and freezes the member on the board: later sets and incrs are refused
// (ErrFrozen) until Release or Ban. Ban deletes the member from every period of the board and
// refuses their later set, incr and delete (ErrBanned) until Unban.
//
// Ops of one board apply in record order; boards are independent of each other.
func (s *State) Apply(b *board.Board, op Op, recordMs int64, skew time.Duration) (Result, error) {
	horizon := recordMs - b.Retention.Milliseconds()
	switch {
	case op.Kind < Set || op.Kind > Release:
		return Result{}, fmt.Errorf("%w: %v", ErrBadOp, op.Kind)
	case op.TSMs < horizon:
		return Result{}, fmt.Errorf("%w: ts %s, retention %s", ErrTooOld, fmtMs(op.TSMs), b.Retention)
	case op.TSMs > recordMs+skew.Milliseconds():
		return Result{}, fmt.Errorf("%w: ts %s, record time %s", ErrTooNew, fmtMs(op.TSMs), fmtMs(recordMs))
	case op.Kind == Set && !inRange(op.Score):
		return Result{}, fmt.Errorf("%w: set %d", ErrOutOfRange, op.Score)
	case op.Kind == Incr && (op.Score > 2*board.MaxScore || op.Score < -2*board.MaxScore):
		return Result{}, fmt.Errorf("%w: incr %d", ErrOutOfRange, op.Score)
	}
	i, found := slices.BinarySearchFunc(s.Boards, b.Name, func(bs BoardState, name string) int { return cmp.Compare(bs.Board, name) })
	if !found {
		s.Boards = slices.Insert(s.Boards, i, BoardState{Board: b.Name, FloorMs: math.MinInt64})
	}
	bs := &s.Boards[i]
	pruned := bs.prune(horizon, recordMs, b.Retention)
	res, err := bs.apply(b, op)
	res.Changed = res.Changed || pruned && found
	if len(bs.Entries) == 0 && len(bs.Requests) == 0 && !bs.Banned && !bs.Frozen {
		// Every id left the retention, so the floor is older than anything Apply accepts.
		s.Boards = slices.Delete(s.Boards, i, i+1)
	}
	return res, err
}

func inRange(v int64) bool { return v >= -board.MaxScore && v <= board.MaxScore }

func fmtMs(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }

func (bs *BoardState) apply(b *board.Board, op Op) (Result, error) {
	// The entries the op names: every entry for a delete, else those of the windows holding
	// its ts (copies; new ones for the periods the member is not in yet).
	var named []Entry
	switch op.Kind {
	case Delete, Ban:
		named = slices.Clone(bs.Entries)
	case Unban, Release:
	default:
		for _, w := range b.Windows(nil, time.UnixMilli(op.TSMs)) {
			if j, ok := bs.find(w.Period, w.ID); ok {
				named = append(named, bs.Entries[j])
			} else {
				named = append(named, Entry{Period: w.Period, ID: w.ID, EndMs: endMs(w)})
			}
		}
	}
	existing := func() []board.ScoreUpdate {
		return updates(b, op.Member, slices.DeleteFunc(slices.Clone(named), func(e Entry) bool { _, ok := bs.find(e.Period, e.ID); return !ok }))
	}
	if slices.ContainsFunc(bs.Requests, func(r Request) bool { return r.Hash == op.RequestHash }) {
		return Result{Outcome: Duplicate, Updates: existing()}, nil
	}
	if op.TSMs <= bs.FloorMs {
		// Most likely a replay of an op applied before its id was forgotten: its entries are
		// re-sent as a duplicate's are, so a replay rewrites a store that lost them.
		return Result{Updates: existing()}, fmt.Errorf("%w: ts %s, newest forgotten %s", ErrForgotten, fmtMs(op.TSMs), fmtMs(bs.FloorMs))
	}
	// Refusals for the state met use up the request id (below).
	refuse := func(err error) (Result, error) {
		bs.remember(Request{op.RequestHash, op.TSMs})
		return Result{Changed: true}, err
	}
	switch op.Kind {
	case Set, Incr, Delete:
		if bs.Banned {
			return refuse(fmt.Errorf("%w: member %q is banned from board %q", ErrBanned, op.Member, b.Name))
		}
	case Ban:
		bs.Banned, bs.Frozen, bs.Rate = true, false, nil
	case Unban:
		bs.Banned = false
	case Release:
		bs.Frozen = false
	}
	rise, minute := int64(0), int64(0)
	if (op.Kind == Set || op.Kind == Incr) && b.FairPlay.Limited() {
		rise, minute = riseOf(op, named), bs.minuteOf(op.TSMs)
		if err := bs.fairPlay(b.FairPlay, rise, minute); err != nil {
			bs.Frozen = true
			return refuse(err)
		}
	}
	// Check every entry before changing any: a refused op changes no entry. These refusals
	// depend on the state, which later ops change, so the op's request id is remembered: its
	// redelivery (after a crash, when the table already holds later ops) is then a duplicate,
	// never applied to a state it was not refused against (TestScoreBoardsAfterKillWithTwoInstances
	// caught an incr refused at the top of the range and applied after a later set).
	for _, e := range named {
		var err error
		switch {
		case op.Kind == Incr && !inRange(e.score()+op.Score):
			err = fmt.Errorf("%w: %d%+d on %s:%s", ErrOutOfRange, e.score(), op.Score, e.Period, e.ID)
		case op.Kind != Delete && op.Scope != "" && e.Scope != "" && op.Scope != e.Scope && !slices.Contains(e.Left, op.Scope) && len(e.Left)+2 > MaxScopesPerPeriod:
			err = fmt.Errorf("%w: scope %q on %s:%s", ErrTooManyScopes, op.Scope, e.Period, e.ID)
		}
		if err != nil {
			return refuse(err)
		}
	}
	for k := range named {
		e := &named[k]
		e.Left = slices.Clone(e.Left)
		e.apply(op)
		j, ok := bs.find(e.Period, e.ID)
		if ok {
			bs.Entries[j] = *e
		} else {
			bs.Entries = slices.Insert(bs.Entries, j, *e)
		}
	}
	if b.FairPlay.RateLimited() && (op.Kind == Set || op.Kind == Incr) {
		bs.count(minute, rise)
	}
	bs.remember(Request{op.RequestHash, op.TSMs})
	return Result{Outcome: Applied, Updates: updates(b, op.Member, named), Changed: true}, nil
}

// riseOf is how far a set or incr lifts the member: an incr by its amount (0 when negative),
// a set by how far it is above the member's best present score on the periods it names
// (from 0 when on none).
func riseOf(op Op, named []Entry) int64 {
	if op.Kind == Incr {
		return max(op.Score, 0)
	}
	base, any := int64(0), false
	for _, e := range named {
		if e.Present && (!any || e.Score > base) {
			base, any = e.Score, true
		}
	}
	return max(op.Score-base, 0)
}

// fairPlay checks a set or incr rising by rise in minute against the limits: the member
// frozen, a rise above MaxIncr, one op or rise too many in the minute.
func (bs *BoardState) fairPlay(f board.FairPlay, rise, minute int64) error {
	at := time.UnixMilli(minute * 60_000).UTC().Format("2006-01-02T15:04Z")
	r := bs.minute(minute)
	switch {
	case bs.Frozen:
		return fmt.Errorf("%w: member frozen on board %q by an earlier quarantined op, until an operator releases or bans them", ErrFrozen, bs.Board)
	case f.MaxIncr > 0 && rise > f.MaxIncr:
		return fmt.Errorf("%w: rise %d above %d on board %q", ErrMaxIncr, rise, f.MaxIncr, bs.Board)
	case f.MaxRateOps > 0 && r.Ops+1 > f.MaxRateOps:
		return fmt.Errorf("%w: op %d in minute %s, above %d ops on board %q", ErrMaxRate, r.Ops+1, at, f.MaxRateOps, bs.Board)
	case f.MaxRatePoints > 0 && r.Points+rise > f.MaxRatePoints:
		return fmt.Errorf("%w: %d points in minute %s, above %d on board %q", ErrMaxRate, r.Points+rise, at, f.MaxRatePoints, bs.Board)
	}
	return nil
}

// minuteOf is the minute (epoch minutes) an op at tsMs counts in: its own, or the oldest
// kept when it is older.
func (bs *BoardState) minuteOf(tsMs int64) int64 {
	m := tsMs / 60_000
	if tsMs < 0 && tsMs%60_000 != 0 {
		m--
	}
	if n := len(bs.Rate); n > 0 {
		m = max(m, bs.Rate[n-1].Minute-(RateMinutes-1))
	}
	return m
}

// minute returns the counts of minute m (zero when none).
func (bs *BoardState) minute(m int64) RateMinute {
	if i, ok := bs.findMinute(m); ok {
		return bs.Rate[i]
	}
	return RateMinute{Minute: m}
}

func (bs *BoardState) findMinute(m int64) (int, bool) {
	return slices.BinarySearchFunc(bs.Rate, m, func(r RateMinute, m int64) int { return cmp.Compare(r.Minute, m) })
}

// count adds an op rising by rise to minute m, and forgets the minutes RateMinutes or more
// before the newest.
func (bs *BoardState) count(m, rise int64) {
	i, ok := bs.findMinute(m)
	if !ok {
		bs.Rate = slices.Insert(bs.Rate, i, RateMinute{Minute: m})
	}
	bs.Rate[i].Ops++
	bs.Rate[i].Points += rise
	newest := bs.Rate[len(bs.Rate)-1].Minute
	bs.Rate = slices.DeleteFunc(bs.Rate, func(r RateMinute) bool { return r.Minute <= newest-RateMinutes })
}

func (e *Entry) score() int64 {
	if !e.Present {
		return 0
	}
	return e.Score
}

func (e *Entry) apply(op Op) {
	if op.Kind == Delete || op.Kind == Ban {
		e.Present, e.Score, e.ReachedMs = false, 0, 0
		return
	}
	v := op.Score
	if op.Kind == Incr {
		v = e.score() + op.Score
	}
	if !e.Present || v != e.Score {
		e.Present, e.Score, e.ReachedMs = true, v, op.TSMs
	}
	if op.Scope != "" && op.Scope != e.Scope {
		if e.Scope != "" {
			e.Left = insertSorted(e.Left, e.Scope)
		}
		if j, ok := slices.BinarySearch(e.Left, op.Scope); ok {
			e.Left = slices.Delete(e.Left, j, j+1)
			if len(e.Left) == 0 {
				e.Left = nil
			}
		}
		e.Scope = op.Scope
	}
}

func insertSorted(s []string, v string) []string {
	i, ok := slices.BinarySearch(s, v)
	if ok {
		return s
	}
	return slices.Insert(s, i, v)
}

// remember records r, forgetting the request with the oldest ts past MaxRequests.
func (bs *BoardState) remember(r Request) {
	i, _ := slices.BinarySearchFunc(bs.Requests, r, compareRequests)
	bs.Requests = slices.Insert(bs.Requests, i, r)
	if len(bs.Requests) > MaxRequests {
		bs.FloorMs = max(bs.FloorMs, bs.Requests[0].TSMs)
		bs.Requests = slices.Delete(bs.Requests, 0, 1)
	}
}

func compareRequests(a, b Request) int {
	return cmp.Or(cmp.Compare(a.TSMs, b.TSMs), cmp.Compare(a.Hash, b.Hash))
}

// prune drops the entries whose boards expired and the ids older than horizon, and tells
// whether there were any.
func (bs *BoardState) prune(horizon, recordMs int64, retention time.Duration) bool {
	n := len(bs.Entries) + len(bs.Requests) + len(bs.Rate)
	bs.Rate = slices.DeleteFunc(bs.Rate, func(r RateMinute) bool { return (r.Minute+1)*60_000 <= horizon })
	bs.Entries = slices.DeleteFunc(bs.Entries, func(e Entry) bool {
		return e.EndMs != 0 && e.EndMs+retention.Milliseconds() <= recordMs
	})
	k := 0
	for k < len(bs.Requests) && bs.Requests[k].TSMs < horizon {
		bs.FloorMs = max(bs.FloorMs, bs.Requests[k].TSMs)
		k++
	}
	bs.Requests = slices.Delete(bs.Requests, 0, k)
	return len(bs.Entries)+len(bs.Requests)+len(bs.Rate) != n
}

func endMs(w board.Window) int64 {
	if w.Period == board.PeriodTotal {
		return 0
	}
	return w.End.UnixMilli()
}

func comparePeriod(p, q board.Period) int {
	return cmp.Compare(slices.Index(board.Periods, p), slices.Index(board.Periods, q))
}

// find returns the index of the entry of period p and id, or where it would be inserted.
func (bs *BoardState) find(p board.Period, id string) (int, bool) {
	return slices.BinarySearchFunc(bs.Entries, Entry{Period: p, ID: id}, func(e, t Entry) int {
		return cmp.Or(comparePeriod(e.Period, t.Period), cmp.Compare(e.ID, t.ID))
	})
}

// Updates returns member's entries on board b (bs.Board), as the processor hands them to its
// sink after an op (and `rankstream reconcile` compares and rewrites them).
func (bs *BoardState) Updates(b *board.Board, member string) []board.ScoreUpdate {
	return updates(b, member, bs.Entries)
}

func updates(b *board.Board, member string, entries []Entry) []board.ScoreUpdate {
	out := make([]board.ScoreUpdate, 0, len(entries))
	for _, e := range entries {
		u := board.ScoreUpdate{Board: b.Name, Member: member, Period: e.Period, PeriodID: e.ID, Present: e.Present,
			Score: e.Score, ReachedMs: e.ReachedMs, Scope: e.Scope, Left: slices.Clone(e.Left)}
		if e.EndMs != 0 {
			u.ExpireAt = time.UnixMilli(e.EndMs).Add(b.Retention)
		}
		out = append(out, u)
	}
	return out
}
