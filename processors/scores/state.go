package scores

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/rankstream/rankstream/internal/board"
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
)

// Kind is what an op does.
type Kind uint8

// Kinds of ops.
const (
	Set    Kind = iota + 1 // the score becomes Op.Score
	Incr                   // the score grows by Op.Score (which may be negative)
	Delete                 // the member leaves every period of the board
)

func (k Kind) String() string {
	switch k {
	case Set:
		return "set"
	case Incr:
		return "incr"
	case Delete:
		return "delete"
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
// Ops of one board apply in record order; boards are independent of each other.
func (s *State) Apply(b *board.Board, op Op, recordMs int64, skew time.Duration) (Result, error) {
	horizon := recordMs - b.Retention.Milliseconds()
	switch {
	case op.Kind < Set || op.Kind > Delete:
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
	if len(bs.Entries) == 0 && len(bs.Requests) == 0 {
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
	if op.Kind == Delete {
		named = slices.Clone(bs.Entries)
	} else {
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
			bs.remember(Request{op.RequestHash, op.TSMs})
			return Result{Changed: true}, err
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
	bs.remember(Request{op.RequestHash, op.TSMs})
	return Result{Outcome: Applied, Updates: updates(b, op.Member, named), Changed: true}, nil
}

func (e *Entry) score() int64 {
	if !e.Present {
		return 0
	}
	return e.Score
}

func (e *Entry) apply(op Op) {
	if op.Kind == Delete {
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
	n := len(bs.Entries) + len(bs.Requests)
	bs.Entries = slices.DeleteFunc(bs.Entries, func(e Entry) bool {
		return e.EndMs != 0 && e.EndMs+retention.Milliseconds() <= recordMs
	})
	k := 0
	for k < len(bs.Requests) && bs.Requests[k].TSMs < horizon {
		bs.FloorMs = max(bs.FloorMs, bs.Requests[k].TSMs)
		k++
	}
	bs.Requests = slices.Delete(bs.Requests, 0, k)
	return len(bs.Entries)+len(bs.Requests) != n
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
