package scores

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
)

const skew = 5 * time.Minute

func mustBoard(t testing.TB, s board.Spec) *board.Board {
	t.Helper()
	b, err := board.NewBoard(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ms(t testing.TB, s string) int64 {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at.UnixMilli()
}

// entries renders a board's entries as "period:id=score@reached/scope" ("-" when absent).
func entries(s *State, name string) []string {
	var out []string
	for _, bs := range s.Boards {
		if bs.Board != name {
			continue
		}
		for _, e := range bs.Entries {
			v := "-"
			if e.Present {
				v = fmt.Sprintf("%d@%d", e.Score, e.ReachedMs)
			}
			if e.Scope != "" || len(e.Left) > 0 {
				v += "/" + e.Scope + strings.Join(append([]string{""}, e.Left...), "!")
			}
			out = append(out, fmt.Sprintf("%s:%s=%s", e.Period, e.ID, v))
		}
	}
	return out
}

func TestApplyRules(t *testing.T) {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"h", "d", "total"}, TZ: "Asia/Shanghai", Retention: "30d"})
	t0 := ms(t, "2026-11-30T15:30:00Z") // 23:30 in Shanghai
	t1 := ms(t, "2026-11-30T16:10:00Z") // 00:10 of the next day
	type step struct {
		op   Op
		want []string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"set, then incr in the same hour, then incr in the next day", []step{
			{Op{1, "m", Set, 100, t0, ""}, []string{"h:2026113023=100@" + fmt.Sprint(t0), "d:20261130=100@" + fmt.Sprint(t0), "total:total=100@" + fmt.Sprint(t0)}},
			{Op{2, "m", Incr, -30, t0 + 5, ""}, []string{"h:2026113023=70@" + fmt.Sprint(t0+5), "d:20261130=70@" + fmt.Sprint(t0+5), "total:total=70@" + fmt.Sprint(t0+5)}},
			// A new hour and day start from 0; the total goes on.
			{Op{3, "m", Incr, 5, t1, ""}, []string{"h:2026113023=70@" + fmt.Sprint(t0+5), "h:2026120100=5@" + fmt.Sprint(t1), "d:20261130=70@" + fmt.Sprint(t0+5), "d:20261201=5@" + fmt.Sprint(t1), "total:total=75@" + fmt.Sprint(t1)}},
		}},
		{"a score that stays keeps its reach time", []step{
			{Op{1, "m", Set, 100, t0, ""}, []string{"h:2026113023=100@" + fmt.Sprint(t0), "d:20261130=100@" + fmt.Sprint(t0), "total:total=100@" + fmt.Sprint(t0)}},
			{Op{2, "m", Set, 100, t0 + 9, ""}, []string{"h:2026113023=100@" + fmt.Sprint(t0), "d:20261130=100@" + fmt.Sprint(t0), "total:total=100@" + fmt.Sprint(t0)}},
			{Op{3, "m", Incr, 0, t0 + 9, ""}, []string{"h:2026113023=100@" + fmt.Sprint(t0), "d:20261130=100@" + fmt.Sprint(t0), "total:total=100@" + fmt.Sprint(t0)}},
		}},
		{"delete leaves every period, a later incr starts from 0", []step{
			{Op{1, "m", Set, 100, t0, ""}, nil},
			{Op{2, "m", Set, 7, t1, ""}, nil},
			{Op{3, "m", Delete, 0, t1 + 1, ""}, []string{"h:2026113023=-", "h:2026120100=-", "d:20261130=-", "d:20261201=-", "total:total=-"}},
			{Op{4, "m", Incr, 3, t1 + 2, ""}, []string{"h:2026113023=-", "h:2026120100=3@" + fmt.Sprint(t1+2), "d:20261130=-", "d:20261201=3@" + fmt.Sprint(t1+2), "total:total=3@" + fmt.Sprint(t1+2)}},
		}},
		{"scopes move and remember where the member was", []step{
			{Op{1, "m", Set, 1, t0, "eu"}, []string{"h:2026113023=1@" + fmt.Sprint(t0) + "/eu", "d:20261130=1@" + fmt.Sprint(t0) + "/eu", "total:total=1@" + fmt.Sprint(t0) + "/eu"}},
			{Op{2, "m", Incr, 1, t0, ""}, []string{"h:2026113023=2@" + fmt.Sprint(t0) + "/eu", "d:20261130=2@" + fmt.Sprint(t0) + "/eu", "total:total=2@" + fmt.Sprint(t0) + "/eu"}},
			{Op{3, "m", Incr, 1, t1, "us"}, []string{"h:2026113023=2@" + fmt.Sprint(t0) + "/eu", "h:2026120100=1@" + fmt.Sprint(t1) + "/us", "d:20261130=2@" + fmt.Sprint(t0) + "/eu", "d:20261201=1@" + fmt.Sprint(t1) + "/us", "total:total=3@" + fmt.Sprint(t1) + "/us!eu"}},
			{Op{4, "m", Incr, 1, t1, "eu"}, []string{"h:2026113023=2@" + fmt.Sprint(t0) + "/eu", "h:2026120100=2@" + fmt.Sprint(t1) + "/eu!us", "d:20261130=2@" + fmt.Sprint(t0) + "/eu", "d:20261201=2@" + fmt.Sprint(t1) + "/eu!us", "total:total=4@" + fmt.Sprint(t1) + "/eu!us"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s State
			for i, st := range tt.steps {
				res, err := s.Apply(b, st.op, st.op.TSMs, skew)
				if err != nil || res.Outcome != Applied || !res.Changed {
					t.Fatalf("step %d: %+v %v", i, res, err)
				}
				if st.want != nil && !slices.Equal(entries(&s, "arena"), st.want) {
					t.Fatalf("step %d: %q, want %q", i, entries(&s, "arena"), st.want)
				}
				for _, u := range res.Updates {
					if u.Board != "arena" || u.Member != "m" {
						t.Fatalf("step %d: update %+v", i, u)
					}
				}
			}
		})
	}
}

func TestApplyUpdatesSayWhatToWrite(t *testing.T) {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"d", "total"}, TZ: "Europe/Berlin", Retention: "2d"})
	at := ms(t, "2026-10-25T12:00:00Z")
	var s State
	s.Apply(b, Op{1, "m", Set, 10, at, "eu"}, at, skew)
	res, err := s.Apply(b, Op{2, "m", Incr, 5, at + 1, "us"}, at+1, skew)
	if err != nil {
		t.Fatal(err)
	}
	want := []board.ScoreUpdate{
		{Board: "arena", Member: "m", Period: board.PeriodDay, PeriodID: "20261025", ExpireAt: time.Date(2026, 10, 27, 23, 0, 0, 0, time.UTC),
			Present: true, Score: 15, ReachedMs: at + 1, Scope: "us", Left: []string{"eu"}},
		{Board: "arena", Member: "m", Period: board.PeriodTotal, PeriodID: "total", Present: true, Score: 15, ReachedMs: at + 1, Scope: "us", Left: []string{"eu"}},
	}
	for i := range res.Updates {
		if !res.Updates[i].ExpireAt.Equal(want[i].ExpireAt) {
			t.Fatalf("update %d expires at %s, want %s (25-hour day's end + 2 days)", i, res.Updates[i].ExpireAt, want[i].ExpireAt)
		}
		res.Updates[i].ExpireAt = want[i].ExpireAt
	}
	if !reflect.DeepEqual(res.Updates, want) {
		t.Fatalf("updates %+v, want %+v", res.Updates, want)
	}
	res, _ = s.Apply(b, Op{3, "m", Delete, 0, at + 2, ""}, at+2, skew)
	if len(res.Updates) != 2 || res.Updates[0].Present || res.Updates[0].Scope != "us" || !slices.Equal(res.Updates[0].Left, []string{"eu"}) {
		t.Fatalf("delete's updates must name every board the member is on: %+v", res.Updates)
	}
}

// persisted returns the state as the group table stores it: encoded and decoded.
func persisted(t testing.TB, s *State) *State {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var out State
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatalf("decode %x: %v", b, err)
	}
	return &out
}

// TestRequestIDAppliedOnceChangesNothing: a request id applied once, whatever it did, changes
// nothing afterwards even if the retry carries another op, value, ts or scope, also after the
// state went through its codec; the retry's result re-sends the entries as they are.
func TestRequestIDAppliedOnceChangesNothing(t *testing.T) {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"d", "total"}, TZ: "UTC"})
	at := ms(t, "2026-11-30T10:00:00Z")
	for _, first := range []Op{{7, "m", Set, 50, at, "eu"}, {7, "m", Incr, 50, at, ""}, {7, "m", Delete, 0, at, ""}} {
		for _, retry := range []Op{{7, "m", Set, 999, at + 5, "us"}, {7, "m", Incr, 1, at, ""}, {7, "m", Delete, 0, at, ""}, {7, "m", Incr, -5, at - 86_400_000, "af"}} {
			t.Run(first.Kind.String()+" then "+retry.Kind.String(), func(t *testing.T) {
				s := new(State)
				mustApply(t, b, s, Op{1, "m", Set, 10, at - 1, ""})
				mustApply(t, b, s, first)
				before := entries(s, "arena")
				s = persisted(t, s)
				res, err := s.Apply(b, retry, at+10, skew)
				if err != nil || res.Outcome != Duplicate || res.Changed {
					t.Fatalf("retry: %+v %v, want an unchanged duplicate", res, err)
				}
				if got := entries(s, "arena"); !slices.Equal(got, before) {
					t.Fatalf("retry changed %q into %q", before, got)
				}
				for _, u := range res.Updates {
					e := s.Boards[0].Entries[slices.IndexFunc(s.Boards[0].Entries, func(e Entry) bool { return e.ID == u.PeriodID })]
					if u.Present != e.Present || u.Score != e.Score || u.ReachedMs != e.ReachedMs {
						t.Fatalf("a duplicate re-sends %+v, the entry is %+v", u, e)
					}
				}
			})
		}
	}
	// TestScoreBoardsAfterKillWithTwoInstances: an incr refused at the top of the range was
	// redelivered after a crash, when the table already held a later set, and was applied.
	t.Run("an op refused for the state it met stays refused after later ops", func(t *testing.T) {
		s := new(State)
		mustApply(t, b, s, Op{1, "m", Set, board.MaxScore, at, ""})
		res, err := s.Apply(b, Op{7, "m", Incr, 1, at, ""}, at, skew)
		if !errors.Is(err, ErrOutOfRange) || !res.Changed || len(res.Updates) != 0 {
			t.Fatalf("incr past the range: %+v %v", res, err)
		}
		mustApply(t, b, s, Op{8, "m", Set, 196, at + 1, ""})
		s = persisted(t, s)
		res, err = s.Apply(b, Op{7, "m", Incr, 1, at, ""}, at+2, skew) // the redelivery
		if err != nil || res.Outcome != Duplicate || res.Updates[0].Score != 196 {
			t.Fatalf("redelivery of a refused op: %+v %v", res, err)
		}
	})
}

func mustApply(t testing.TB, b *board.Board, s *State, op Op) Result {
	t.Helper()
	res, err := s.Apply(b, op, op.TSMs, skew)
	if err != nil {
		t.Fatalf("Apply(%+v): %v", op, err)
	}
	return res
}

func TestScoresStayExactInRange(t *testing.T) {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"h", "total"}, TZ: "UTC"})
	at := ms(t, "2026-11-30T10:00:00Z")
	next := at + 3_600_000
	const m = board.MaxScore
	tests := []struct {
		name string
		ops  []Op
		err  error
		want []string // after the last op
	}{
		{"set the maximum", []Op{{1, "x", Set, m, at, ""}}, nil, []string{fmt.Sprintf("h:2026113010=%d@%d", m, at), fmt.Sprintf("total:total=%d@%d", m, at)}},
		{"set the minimum", []Op{{1, "x", Set, -m, at, ""}}, nil, []string{fmt.Sprintf("h:2026113010=%d@%d", -m, at), fmt.Sprintf("total:total=%d@%d", -m, at)}},
		{"set one above", []Op{{1, "x", Set, m + 1, at, ""}}, ErrOutOfRange, nil},
		{"set one below", []Op{{1, "x", Set, -m - 1, at, ""}}, ErrOutOfRange, nil},
		{"set the int64 extremes", []Op{{1, "x", Set, math.MinInt64, at, ""}}, ErrOutOfRange, nil},
		{"incr the int64 extremes", []Op{{1, "x", Incr, math.MaxInt64, at, ""}}, ErrOutOfRange, nil},
		{"incr from min to max", []Op{{1, "x", Set, -m, at, ""}, {2, "x", Incr, 2 * m, at, ""}}, nil, []string{fmt.Sprintf("h:2026113010=%d@%d", m, at), fmt.Sprintf("total:total=%d@%d", m, at)}},
		// The new hour starts from 0 and would fit; the total would not: refused whole.
		{"incr leaving the range in one period only", []Op{{1, "x", Set, m - 5, at, ""}, {2, "x", Incr, 6, next, ""}}, ErrOutOfRange,
			[]string{fmt.Sprintf("h:2026113010=%d@%d", m-5, at), fmt.Sprintf("total:total=%d@%d", m-5, at)}},
		{"decr below the range", []Op{{1, "x", Set, -m + 1, at, ""}, {2, "x", Incr, -2, at, ""}}, ErrOutOfRange,
			[]string{fmt.Sprintf("h:2026113010=%d@%d", -m+1, at), fmt.Sprintf("total:total=%d@%d", -m+1, at)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s State
			var err error
			for i, op := range tt.ops {
				if _, err = s.Apply(b, op, op.TSMs, skew); err != nil && i < len(tt.ops)-1 {
					t.Fatal(err)
				}
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("last op: %v, want %v", err, tt.err)
			}
			if got := entries(&s, "arena"); !slices.Equal(got, tt.want) {
				t.Fatalf("entries %q, want %q", got, tt.want)
			}
		})
	}
}

func TestApplyRefusesOpsOutsideRetentionAndSkew(t *testing.T) {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"d"}, TZ: "UTC", Retention: "2d"})
	rec := ms(t, "2026-11-30T10:00:00Z")
	var s State
	for _, tt := range []struct {
		ts  int64
		err error
	}{
		{rec - 2*86_400_000 - 1, ErrTooOld},
		{rec - 2*86_400_000, nil},
		{rec + skew.Milliseconds(), nil},
		{rec + skew.Milliseconds() + 1, ErrTooNew},
	} {
		if _, err := s.Apply(b, Op{uint64(tt.ts), "m", Incr, 1, tt.ts, ""}, rec, skew); !errors.Is(err, tt.err) {
			t.Errorf("ts %d ms from the record time: %v, want %v", tt.ts-rec, err, tt.err)
		}
	}
	if _, err := s.Apply(b, Op{9, "m", Kind(9), 1, rec, ""}, rec, skew); !errors.Is(err, ErrBadOp) {
		t.Errorf("unknown op: %v", err)
	}
}

// TestRequestMemoryIsBounded: past MaxRequests ids per member and board, the id with the
// oldest ts is forgotten and its ts becomes the floor: a retry of it is refused, not applied
// again; ops after the floor go on.
func TestRequestMemoryIsBounded(t *testing.T) {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"total"}, TZ: "UTC", Retention: "30d"})
	at := ms(t, "2026-11-30T10:00:00Z")
	var s State
	for i := range MaxRequests + 10 {
		mustApply(t, b, &s, Op{uint64(1000 + i), "m", Incr, 1, at + int64(i), ""})
	}
	bs := s.Boards[0]
	if len(bs.Requests) != MaxRequests || bs.FloorMs != at+9 || bs.Entries[0].Score != MaxRequests+10 {
		t.Fatalf("%d ids kept, floor %d (want %d), score %d", len(bs.Requests), bs.FloorMs-at, 9, bs.Entries[0].Score)
	}
	// The retry of a forgotten id carrying its ts is refused, and re-sends the entry as it is
	// (a replay rewrites a store that lost it).
	if res, err := s.Apply(b, Op{1003, "m", Incr, 1, at + 3, ""}, at+MaxRequests+20, skew); !errors.Is(err, ErrForgotten) ||
		len(res.Updates) != 1 || res.Updates[0].Score != MaxRequests+10 || !res.Updates[0].Present || res.Changed {
		t.Fatalf("retry of a forgotten id: %+v %v", res, err)
	}
	// A remembered one is a duplicate, a new one after the floor is applied.
	if res, err := s.Apply(b, Op{1010, "m", Incr, 1, at + 10, ""}, at+MaxRequests+20, skew); err != nil || res.Outcome != Duplicate {
		t.Fatalf("retry of a remembered id: %+v %v", res, err)
	}
	if res, err := s.Apply(b, Op{5, "m", Incr, 1, at + 10, ""}, at+MaxRequests+20, skew); err != nil || res.Outcome != Applied {
		t.Fatalf("new op after the floor: %+v %v", res, err)
	}
	if s.Boards[0].FloorMs != at+10 || persisted(t, &s).Boards[0].FloorMs != at+10 {
		t.Fatalf("floor %d after one more id", s.Boards[0].FloorMs-at)
	}
	// Ids leave with the retention: a month later only the new op's id is kept, and the
	// older ones' retries are too old.
	later := at + 31*86_400_000
	mustApply(t, b, &s, Op{6, "m", Incr, 1, later, ""})
	if n := len(s.Boards[0].Requests); n != 1 {
		t.Fatalf("%d ids kept after the retention", n)
	}
	if _, err := s.Apply(b, Op{1500, "m", Incr, 1, at + 500, ""}, later, skew); !errors.Is(err, ErrTooOld) {
		t.Fatalf("retry older than the retention: %v", err)
	}
}

func TestExpiredPeriodsArePruned(t *testing.T) {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"h", "d"}, TZ: "UTC", Retention: "1d"})
	at := ms(t, "2026-11-30T10:00:00Z")
	var s State
	mustApply(t, b, &s, Op{1, "m", Set, 1, at, ""})
	// The day ends at midnight; with one day of retention its board lives until 12-02 00:00.
	res := mustApply(t, b, &s, Op{2, "m", Set, 2, ms(t, "2026-12-01T23:59:59.999Z"), ""})
	// The hour of the first op ended at 11:00 and expired a day later: pruned.
	if got := entries(&s, "arena"); len(got) != 3 || !res.Changed || strings.HasPrefix(got[0], "h:2026113010") {
		t.Fatalf("before expiry: %q", got)
	}
	mustApply(t, b, &s, Op{3, "m", Set, 3, ms(t, "2026-12-02T00:00:00Z"), ""})
	want := []string{"h:2026120123=2@" + fmt.Sprint(ms(t, "2026-12-01T23:59:59.999Z")), "h:2026120200=3@" + fmt.Sprint(ms(t, "2026-12-02T00:00:00Z")),
		"d:20261201=2@" + fmt.Sprint(ms(t, "2026-12-01T23:59:59.999Z")), "d:20261202=3@" + fmt.Sprint(ms(t, "2026-12-02T00:00:00Z"))}
	if got := entries(&s, "arena"); !slices.Equal(got, want) {
		t.Fatalf("after expiry: %q, want %q", got, want)
	}
	// A member whose periods and ids all expired leaves no board state behind, even when the
	// op that found them expired is refused; pruning alone is a change to write back.
	later := ms(t, "2026-12-10T00:00:00Z")
	res, err := s.Apply(b, Op{4, "m", Incr, 2 * board.MaxScore, later, ""}, later, skew)
	if !errors.Is(err, ErrOutOfRange) || !res.Changed || len(s.Boards) != 1 || len(s.Boards[0].Entries) != 0 || len(s.Boards[0].Requests) != 1 {
		t.Fatalf("all expired: %+v %v, boards %+v (want only the refused op's request id)", res, err, s.Boards)
	}
	// Once the ids expired too, nothing is left.
	muchLater := ms(t, "2026-12-20T00:00:00Z")
	if res, err := s.Apply(b, Op{5, "m", Set, 2 * board.MaxScore, muchLater, ""}, muchLater, skew); !errors.Is(err, ErrOutOfRange) || res.Changed || len(s.Boards) != 1 {
		t.Fatalf("a set out of range is refused before the state is read: %+v %v", res, err)
	}
	if res, err := s.Apply(b, Op{6, "m", Incr, 2 * board.MaxScore, muchLater, ""}, muchLater, skew); !errors.Is(err, ErrOutOfRange) || !res.Changed || len(s.Boards[0].Requests) != 1 {
		t.Fatalf("expired ids: %+v %v, boards %+v", res, err, s.Boards)
	}
}

func TestScopesPerPeriodAreBounded(t *testing.T) {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"total"}, TZ: "UTC"})
	at := ms(t, "2026-11-30T10:00:00Z")
	var s State
	for i := range MaxScopesPerPeriod {
		mustApply(t, b, &s, Op{uint64(i), "m", Incr, 1, at, fmt.Sprintf("r%02d", i)})
	}
	if _, err := s.Apply(b, Op{99, "m", Incr, 1, at, "r99"}, at, skew); !errors.Is(err, ErrTooManyScopes) || !strings.Contains(err.Error(), `"r99"`) {
		t.Fatalf("scope %d: %v", MaxScopesPerPeriod+1, err)
	}
	if res, err := s.Apply(b, Op{100, "m", Incr, 1, at, "r03"}, at, skew); err != nil || res.Updates[0].Scope != "r03" || len(res.Updates[0].Left) != MaxScopesPerPeriod-1 {
		t.Fatalf("back to a scope held before: %+v %v", res, err)
	}
	if res, err := s.Apply(b, Op{101, "m", Incr, 1, at, ""}, at, skew); err != nil || res.Updates[0].Score != MaxScopesPerPeriod+2 {
		t.Fatalf("an op without scope: %+v %v", res, err)
	}
}

// redisModel is what a store holds after writing updates in order: per board, period and
// scope ("" global), each member's score and reach time.
type redisModel map[string]string

func (m redisModel) write(us []board.ScoreUpdate) {
	for _, u := range us {
		key := u.Board + ":" + string(u.Period) + ":" + u.PeriodID + ":"
		for _, l := range u.Left {
			delete(m, key+l+":"+u.Member)
		}
		boards := []string{""}
		if u.Scope != "" {
			boards = append(boards, u.Scope)
		}
		for _, sc := range boards {
			k := key + sc + ":" + u.Member
			if u.Present {
				m[k] = fmt.Sprintf("%d@%d", u.Score, u.ReachedMs)
			} else {
				delete(m, k)
			}
		}
	}
}

// TestApplyOrderIndependence: for random ops of one member on three boards (set, incr,
// delete, scopes, ties, hours and days crossed, and retries of earlier request ids carrying
// other ops and values), every interleaving that keeps each board's ops in their order and
// puts each retry anywhere after its request id's first op gives the same state, the same
// store contents (writing every result's updates in order), and survives the codec.
func TestApplyOrderIndependence(t *testing.T) {
	boards := []*board.Board{
		mustBoard(t, board.Spec{Name: "arena", Periods: []string{"h", "d", "w", "total"}, TZ: "Asia/Shanghai", Retention: "30d"}),
		mustBoard(t, board.Spec{Name: "sales", Periods: []string{"d", "m", "season", "total"}, TZ: "America/New_York",
			Seasons: []board.SeasonSpec{{Name: "s1", Start: "2026-11-01", End: "2026-12-01"}, {Name: "s2", Start: "2026-12-01", End: "2027-01-01"}}}),
		mustBoard(t, board.Spec{Name: "t", Periods: []string{"total"}, TZ: "UTC", Shards: "4"}),
	}
	base := ms(t, "2026-11-30T15:00:00Z")
	rng := rand.New(rand.NewPCG(11, 11))
	scopes := []string{"", "", "eu", "us", "asia"}
	type rec struct {
		board int
		op    Op
		retry bool
	}
	for trial := range 150 {
		// Per board: its first ops in order; retries reference an earlier first op.
		perBoard := make([][]rec, len(boards))
		var retries []rec
		for i := range 1 + rng.IntN(40) {
			bi := rng.IntN(len(boards))
			if len(perBoard[bi]) > 0 && rng.IntN(4) == 0 {
				r := perBoard[bi][rng.IntN(len(perBoard[bi]))]
				r.op.Kind, r.op.Score, r.op.TSMs, r.op.Scope = Kind(1+rng.IntN(3)), rng.Int64N(100)-50, base+rng.Int64N(7_200_000), scopes[rng.IntN(len(scopes))]
				r.retry = true
				retries = append(retries, r)
				continue
			}
			kind := Kind(1 + rng.IntN(2))
			if rng.IntN(8) == 0 {
				kind = Delete
			}
			perBoard[bi] = append(perBoard[bi], rec{bi, Op{uint64(i), "m", kind, rng.Int64N(100) - 50, base + rng.Int64N(7_200_000), scopes[rng.IntN(len(scopes))]}, false})
		}
		var want *State
		var wantStore redisModel
		for p := range 20 {
			order := interleave(rng, perBoard, p == 0)
			for _, r := range retries {
				first := slices.IndexFunc(order, func(o rec) bool { return !o.retry && o.board == r.board && o.op.RequestHash == r.op.RequestHash })
				at := first + 1
				if p > 0 {
					at += rng.IntN(len(order) - first)
				}
				order = slices.Insert(order, at, r)
			}
			s := new(State)
			store := redisModel{}
			for k, r := range order {
				res, err := s.Apply(boards[r.board], r.op, max(base+7_200_000, r.op.TSMs), skew)
				if err != nil {
					t.Fatalf("trial %d: %+v: %v", trial, r.op, err)
				}
				if (res.Outcome == Duplicate) != r.retry {
					t.Fatalf("trial %d: %+v (retry %v) was %v", trial, r.op, r.retry, res.Outcome)
				}
				store.write(res.Updates)
				if k%7 == 0 {
					s = persisted(t, s)
				}
			}
			if p == 0 {
				want, wantStore = s, store
				continue
			}
			if !reflect.DeepEqual(encoded(t, s), encoded(t, want)) {
				t.Fatalf("trial %d: order %d gives\n%+v\nthe board order gives\n%+v", trial, p, s, want)
			}
			if !reflect.DeepEqual(store, wantStore) {
				t.Fatalf("trial %d: order %d stores\n%v\nthe board order\n%v", trial, p, store, wantStore)
			}
		}
	}
}

func encoded(t testing.TB, s *State) []byte {
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// interleave merges the boards' sequences at random (or one board after the other).
func interleave[T any](rng *rand.Rand, seqs [][]T, sequential bool) []T {
	var out []T
	next := make([]int, len(seqs))
	for {
		var open []int
		for i, s := range seqs {
			if next[i] < len(s) {
				open = append(open, i)
			}
		}
		if len(open) == 0 {
			return out
		}
		i := open[0]
		if !sequential {
			i = open[rng.IntN(len(open))]
		}
		out = append(out, seqs[i][next[i]])
		next[i]++
	}
}

func sampleState(t testing.TB) *State {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"h", "d", "total"}, TZ: "Asia/Shanghai"})
	c := mustBoard(t, board.Spec{Name: "b2", Periods: []string{"season", "total"}, TZ: "UTC", Seasons: []board.SeasonSpec{{Name: "s1", Start: "2026-01-01", End: "2027-01-01"}}})
	at := ms(t, "2026-11-30T15:30:00Z")
	var s State
	mustApply(t, b, &s, Op{1, "m", Set, -board.MaxScore, at, "eu"})
	mustApply(t, b, &s, Op{2, "m", Incr, 5, at + 3_600_000, "us"})
	mustApply(t, c, &s, Op{3, "m", Set, board.MaxScore, at, ""})
	mustApply(t, c, &s, Op{4, "m", Delete, 0, at + 1, ""})
	return &s
}

// fairState is a state with every fair-play field: a frozen board with rate minutes and a
// banned one without entries.
func fairState(t testing.TB) *State {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"d", "total"}, TZ: "UTC", MaxIncr: "10", MaxRateOps: "5"})
	c := mustBoard(t, board.Spec{Name: "cup", Periods: []string{"total"}, TZ: "UTC"})
	at := ms(t, "2026-11-30T15:30:00Z")
	var s State
	mustApply(t, b, &s, Op{1, "m", Incr, 3, at, ""})
	mustApply(t, b, &s, Op{2, "m", Incr, 3, at - 120_000, ""})
	if _, err := s.Apply(b, Op{3, "m", Incr, 11, at, ""}, at, skew); !errors.Is(err, ErrMaxIncr) {
		t.Fatal(err)
	}
	mustApply(t, c, &s, Op{4, "m", Set, 1, at, ""})
	mustApply(t, c, &s, Op{5, "m", Ban, 0, at, ""})
	return &s
}

func TestStateBinaryRoundTrip(t *testing.T) {
	for _, s := range []*State{sampleState(t), fairState(t)} {
		testRoundTrip(t, s)
	}
}

func testRoundTrip(t *testing.T, s *State) {
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	got := persisted(t, s)
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip: got %+v, want %+v", got, s)
	}
	for i := range len(b) {
		keep := *got
		if err := got.UnmarshalBinary(b[:i]); !errors.Is(err, ErrCorruptState) {
			t.Fatalf("truncated to %d bytes: err = %v", i, err)
		}
		if !reflect.DeepEqual(*got, keep) {
			t.Fatal("failed unmarshal touched the receiver")
		}
	}
	for _, bad := range [][]byte{{3}, append(slices.Clone(b), 0)} {
		if err := new(State).UnmarshalBinary(bad); !errors.Is(err, ErrCorruptState) {
			t.Errorf("%x: %v", bad, err)
		}
	}
}

func FuzzStateUnmarshalBinary(f *testing.F) {
	b, _ := sampleState(f).MarshalBinary()
	f.Add(b)
	b, _ = fairState(f).MarshalBinary()
	f.Add(b)
	f.Add([]byte{stateVersion, 0})
	f.Add([]byte{stateVersion, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		var s State
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var s2 State
		if err := s2.UnmarshalBinary(again); err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("re-encoding an accepted state fails: %v", err)
		}
	})
}
