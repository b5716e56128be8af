package sketch

import (
	"testing"
	"time"
)

// TestFrontThrashAllocatesNothing has two candidates that share the only
// front entry take it from each other over and over, each counted through
// it once it holds it, all in one slot: the entries with pending events are
// listed once per flush however often an entry changes hands (the list does
// not outgrow the table, so Add allocates nothing), and the counts stay
// exact.
func TestFrontThrashAllocatesNothing(t *testing.T) {
	w, err := New(WithK(2), WithCandidates(2))
	if err != nil {
		t.Fatal(err)
	}
	if len(w.front) != 1 {
		t.Fatalf("front table of %d entries, want 1", len(w.front))
	}
	ts := time.Unix(1_700_000_000, 0)
	items := [2]string{"item-a", "item-b"}
	want := map[string]uint64{}
	add := func(item string) {
		w.Add(item, ts)
		want[item]++
	}
	add(items[0])
	add(items[1])
	handovers := 0
	allocs := testing.AllocsPerRun(1000, func() {
		// The item that does not hold the entry gets events until it
		// takes it, then one more, counted through it.
		next := items[0]
		if e := w.front[0]; e.n != 0 && w.cands[e.c].item == next {
			next = items[1]
		}
		for w.front[0].n == 0 || w.cands[w.front[0].c].item != next {
			add(next)
		}
		add(next)
		handovers++
	})
	if allocs != 0 || len(w.frontDirty) > len(w.front) {
		t.Errorf("Add allocates %.2f times per handover; %d entries listed as pending, of %d", allocs, len(w.frontDirty), len(w.front))
	}
	if err := w.check(); err != nil {
		t.Fatal(err)
	}
	w.Advance(ts.Add(DefaultSlide))
	for item, n := range want {
		if got := w.Count(item); got.Count != n || got.Error != 0 {
			t.Errorf("%s: count %d ± %d, want %d exactly", item, got.Count, got.Error, n)
		}
	}
	t.Logf("%d handovers, counts %v", handovers, want)
}
