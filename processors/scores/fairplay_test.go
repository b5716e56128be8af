package scores

import (
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rankstream/rankstream/board"
)

// TestFairPlayRules: each limit of the boards file, at its edge and one past it, and what the
// member's state does afterwards (frozen: kept, not raised), table-driven on the pure state.
func TestFairPlayRules(t *testing.T) {
	fp := func(incr, ops, points string) *board.Board {
		return mustBoard(t, board.Spec{Name: "arena", Periods: []string{"d", "total"}, TZ: "UTC",
			MaxIncr: incr, MaxRateOps: ops, MaxRatePoints: points})
	}
	at := ms(t, "2026-11-30T10:00:00Z") // a minute's first instant
	type step struct {
		op   Op
		want error // nil: applied
	}
	tests := []struct {
		name  string
		board *board.Board
		steps []step
		total string // the total entry afterwards
	}{
		{"an incr of max_incr is applied, one more is quarantined and freezes", fp("100", "", ""), []step{
			{Op{1, "m", Incr, 100, at, ""}, nil},
			{Op{2, "m", Incr, 101, at + 1, ""}, ErrMaxIncr},
			{Op{3, "m", Incr, 1, at + 2, ""}, ErrFrozen},
			{Op{4, "m", Set, 50, at + 3, ""}, ErrFrozen},
		}, "total:total=100@" + fmt.Sprint(at)},
		{"a negative incr rises by nothing", fp("100", "", ""), []step{
			{Op{1, "m", Incr, -5000, at, ""}, nil},
			{Op{2, "m", Incr, 100, at + 1, ""}, nil},
		}, "total:total=-4900@" + fmt.Sprint(at+1)},
		{"a set rises from the member's best present score", fp("100", "", ""), []step{
			{Op{1, "m", Set, 100, at, ""}, nil},
			{Op{2, "m", Set, 200, at + 1, ""}, nil},
			{Op{3, "m", Set, 150, at + 2, ""}, nil}, // lower: rises by nothing
			{Op{4, "m", Set, 251, at + 3, ""}, ErrMaxIncr},
		}, "total:total=150@" + fmt.Sprint(at+2)},
		{"a first set above max_incr is quarantined", fp("100", "", ""), []step{
			{Op{1, "m", Set, 101, at, ""}, ErrMaxIncr},
		}, ""},
		{"max_rate ops: the 3rd op of a minute is quarantined", fp("", "2", ""), []step{
			{Op{1, "m", Incr, 1, at, ""}, nil},
			{Op{2, "m", Incr, 1, at + 59_999, ""}, nil},
			{Op{3, "m", Incr, 1, at + 30_000, ""}, ErrMaxRate},
		}, "total:total=2@" + fmt.Sprint(at+59_999)},
		{"max_rate ops: the next minute counts afresh", fp("", "2", ""), []step{
			{Op{1, "m", Incr, 1, at, ""}, nil},
			{Op{2, "m", Incr, 1, at + 1, ""}, nil},
			{Op{3, "m", Incr, 1, at + 60_000, ""}, nil},
			{Op{4, "m", Incr, 1, at + 60_001, ""}, nil},
		}, "total:total=4@" + fmt.Sprint(at+60_001)},
		{"max_rate points: rises add up within a minute", fp("", "", "100"), []step{
			{Op{1, "m", Incr, 60, at, ""}, nil},
			{Op{2, "m", Incr, -60, at + 1, ""}, nil}, // an op, no points
			{Op{3, "m", Incr, 40, at + 2, ""}, nil},
			{Op{4, "m", Incr, 1, at + 3, ""}, ErrMaxRate},
		}, "total:total=40@" + fmt.Sprint(at+2)},
		{"an op an hour older than the newest counts in the oldest minute kept", fp("", "1", ""), []step{
			{Op{1, "m", Incr, 1, at + 59*60_000, ""}, nil},
			{Op{2, "m", Incr, 1, at, ""}, nil}, // the oldest minute kept: its own
			{Op{3, "m", Incr, 1, at - 3*3_600_000, ""}, ErrMaxRate},
		}, "total:total=2@" + fmt.Sprint(at)},
		{"a delete of a frozen member applies; the freeze stays", fp("10", "", ""), []step{
			{Op{1, "m", Incr, 5, at, ""}, nil},
			{Op{2, "m", Incr, 11, at + 1, ""}, ErrMaxIncr},
			{Op{3, "m", Delete, 0, at + 2, ""}, nil},
			{Op{4, "m", Incr, 1, at + 3, ""}, ErrFrozen},
		}, "total:total=-"},
		{"release lifts the freeze, the entries go on", fp("10", "", ""), []step{
			{Op{1, "m", Incr, 5, at, ""}, nil},
			{Op{2, "m", Incr, 11, at + 1, ""}, ErrMaxIncr},
			{Op{3, "m", Release, 0, at + 2, ""}, nil},
			{Op{4, "m", Incr, 1, at + 3, ""}, nil},
			{Op{2, "m", Incr, 11, at + 1, ""}, nil}, // the quarantined op's retry: a duplicate
		}, "total:total=6@" + fmt.Sprint(at+3)},
		{"ban removes, refuses, and unban starts again from nothing", fp("", "", ""), []step{
			{Op{1, "m", Set, 500, at, ""}, nil},
			{Op{2, "m", Ban, 0, at + 1, ""}, nil},
			{Op{3, "m", Set, 1, at + 2, ""}, ErrBanned},
			{Op{4, "m", Delete, 0, at + 3, ""}, ErrBanned},
			{Op{5, "m", Release, 0, at + 4, ""}, nil},
			{Op{6, "m", Incr, 1, at + 5, ""}, ErrBanned},
			{Op{7, "m", Unban, 0, at + 6, ""}, nil},
			{Op{8, "m", Incr, 7, at + 7, ""}, nil},
			{Op{3, "m", Set, 1, at + 2, ""}, nil}, // refused while banned: for good
		}, "total:total=7@" + fmt.Sprint(at+7)},
		{"ban lifts a freeze", fp("10", "", ""), []step{
			{Op{1, "m", Incr, 11, at, ""}, ErrMaxIncr},
			{Op{2, "m", Ban, 0, at + 1, ""}, nil},
			{Op{3, "m", Unban, 0, at + 2, ""}, nil},
			{Op{4, "m", Incr, 10, at + 3, ""}, nil},
		}, "total:total=10@" + fmt.Sprint(at+3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := new(State)
			for i, st := range tt.steps {
				s = persisted(t, s) // every step through the group table's codec
				res, err := s.Apply(tt.board, st.op, st.op.TSMs, skew)
				switch {
				case st.want == nil && err != nil, st.want != nil && !errors.Is(err, st.want):
					t.Fatalf("step %d %+v: err %v, want %v", i, st.op, err, st.want)
				case st.want != nil && (len(res.Updates) != 0 || !res.Changed):
					t.Fatalf("step %d: a refused op returns %+v", i, res)
				case st.want != nil && Quarantined(err) != !errors.Is(st.want, ErrBanned):
					t.Fatalf("step %d: Quarantined(%v) = %v", i, err, Quarantined(err))
				}
			}
			got := entries(s, "arena")
			total := ""
			if i := slices.IndexFunc(got, func(e string) bool { return len(e) > 11 && e[:11] == "total:total" }); i >= 0 {
				total = got[i]
			}
			if total != tt.total {
				t.Fatalf("total entry %q, want %q (all: %q)", total, tt.total, got)
			}
		})
	}
}

// TestBanRemovesEveryPeriodAndSticks: a ban's updates remove the member from every period of
// the board (those of days gone by too), a banned member's state survives the codec and the
// pruning of every entry and id, and the ban is a board's own.
func TestBanRemovesEveryPeriodAndSticks(t *testing.T) {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"h", "d", "total"}, TZ: "UTC", Retention: "2d"})
	other := mustBoard(t, board.Spec{Name: "cup", Periods: []string{"total"}, TZ: "UTC"})
	at := ms(t, "2026-11-30T10:00:00Z")
	s := new(State)
	mustApply(t, b, s, Op{1, "m", Set, 5, at - 86_400_000, "eu"})
	mustApply(t, b, s, Op{2, "m", Incr, 5, at, ""})
	mustApply(t, other, s, Op{3, "m", Set, 9, at, ""})
	res := mustApply(t, b, s, Op{4, "m", Ban, 0, at + 1, ""})
	if len(res.Updates) != 5 {
		t.Fatalf("a ban updates %d entries, want the 5 periods the member is on: %+v", len(res.Updates), res.Updates)
	}
	for _, u := range res.Updates {
		if u.Present || u.Scope != "" && u.Scope != "eu" {
			t.Fatalf("a ban leaves %+v", u)
		}
	}
	// A week later every entry and id of arena left the retention: the ban stays.
	later := at + 7*86_400_000
	s = persisted(t, s)
	if _, err := s.Apply(b, Op{5, "m", Set, 1, later, ""}, later, skew); !errors.Is(err, ErrBanned) {
		t.Fatalf("a week later: %v, want banned", err)
	}
	s = persisted(t, s)
	if _, err := s.Apply(other, Op{6, "m", Incr, 1, later, ""}, later, skew); err != nil {
		t.Fatalf("another board: %v", err)
	}
	if got := entries(s, "cup"); !slices.Equal(got, []string{"total:total=10@" + fmt.Sprint(later)}) {
		t.Fatalf("cup: %q", got)
	}
}

// TestStateVersion1Decodes: a state written before fair play (version 1, sampleState as the
// previous encoder wrote it) decodes into the same state, neither banned nor frozen.
func TestStateVersion1Decodes(t *testing.T) {
	v1, err := hex.DecodeString("0102056172656e61ffffffffffffffffff0102010000000000000080939ed1c568020000000000000080cdd5d4c56805000a3230323631313330323380f0f9d2c56801ffffffffffff3f80939ed1c56802657500000a3230323631323031303080aab1d6c568010a80cdd5d4c568027573000108323032363131333080f0f9d2c56801ffffffffffff3f80939ed1c568026575000108323032363132303180e0aca5c668010a80cdd5d4c568027573000505746f74616c0001f5ffffffffff3f80cdd5d4c56802757301026575026232ffffffffffffffffff0102030000000000000080939ed1c568040000000000000082939ed1c568020402733180d0dee8d96800000000000505746f74616c000000000000")
	if err != nil {
		t.Fatal(err)
	}
	var s State
	if err := s.UnmarshalBinary(v1); err != nil {
		t.Fatal(err)
	}
	if want := sampleState(t); !slices.EqualFunc(s.Boards, want.Boards, func(a, b BoardState) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Fatalf("version 1 decodes to %+v, want %+v", s, want)
	}
}
