package scores

import (
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
)

// TestChangedTotals: the first state of a member writes every entry; the same state again
// writes nothing; an op writes only the entries it changed; a delete writes every period the
// member leaves as deleted; a writer that forgot (a rebalance) writes everything again.
func TestChangedTotals(t *testing.T) {
	b := mustBoard(t, board.Spec{Name: "arena", Periods: []string{"d", "total"}, TZ: "UTC"})
	rec := ms(t, "2026-11-30T12:00:00Z")
	var s State
	apply := func(kind Kind, score int64, ts string, hash uint64) {
		t.Helper()
		if _, err := s.Apply(b, Op{RequestHash: hash, Member: "ann", Kind: kind, Score: score, TSMs: ms(t, ts), Scope: "eu"}, rec, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	sent := map[totalKey]totalVal{}
	type row struct {
		period  string
		score   int64
		deleted bool
	}
	for _, step := range []struct {
		name string
		do   func()
		want []row
	}{
		{"first state", func() { apply(Incr, 5, "2026-11-29T10:00:00Z", 1) },
			[]row{{"d:20261129", 5, false}, {"total", 5, false}}},
		{"the same state again", func() {}, nil},
		{"an op on another day", func() { apply(Incr, 3, "2026-11-30T10:00:00Z", 2) },
			[]row{{"d:20261130", 3, false}, {"total", 8, false}}},
		{"a duplicate request id", func() { apply(Incr, 3, "2026-11-30T10:00:00Z", 2) }, nil},
		{"delete", func() { apply(Delete, 0, "2026-11-30T11:00:00Z", 3) },
			[]row{{"d:20261129", 0, true}, {"d:20261130", 0, true}, {"total", 0, true}}},
		{"after forgetting", func() { clear(sent) },
			[]row{{"d:20261129", 0, true}, {"d:20261130", 0, true}, {"total", 0, true}}},
	} {
		step.do()
		got := changedTotals(nil, "ann", &s, 42, sent)
		if len(got) != len(step.want) {
			t.Fatalf("%s: %+v, want %+v", step.name, got, step.want)
		}
		for i, g := range got {
			w := step.want[i]
			if g.Board != "arena" || g.Member != "ann" || g.Period != w.period || g.Score != w.score || g.Deleted != w.deleted || g.Version != 42 || g.Scope != "eu" {
				t.Errorf("%s: row %d = %+v, want %+v", step.name, i, g, w)
			}
		}
	}
}
