package sketch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch/exact"
)

// TestBoundsHoldOnRandomStreams is the main property test: over random
// shapes and random streams (late and early events, watermark jumps), after
// every operation every invariant holds and every item's true windowed count
// lies in [Count − Error, Count], for candidates and non-candidates alike
// (so Count-Min never under-counts).
func TestBoundsHoldOnRandomStreams(t *testing.T) {
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 1))
		cfg := randomConfig(rng)
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			w := newWindow(cfg)
			o := newExact(cfg)
			st := newStream(seed, 4+rng.IntN(40))
			for range 400 {
				st.step(w, o)
				verify(t, w, o, st.items)
			}
		})
	}
}

// TestExpiryIsExact checks that sliding removes exactly the events that left:
// with a sketch wide enough to have no collisions, room for every item and a
// block per slot (so that the sketch forgets exactly with the slots too),
// every count is exact (error 0) at every step, whatever the late policy and
// lookahead.
func TestExpiryIsExact(t *testing.T) {
	for seed := range uint64(30) {
		rng := rand.New(rand.NewPCG(seed, 2))
		cfg := randomConfig(rng)
		cfg.width, cfg.depth, cfg.blocks = 256, 4, cfg.slots()
		st := newStream(seed, 12)
		cfg.candidates = max(cfg.k, len(st.items))
		w := newWindow(cfg)
		o := newExact(cfg)
		for range 500 {
			st.step(w, o)
			verify(t, w, o, st.items)
			for _, it := range st.items {
				if got, want := w.Count(it), o.Count(it); got.Count != want || got.Error != 0 {
					t.Fatalf("seed %d: %s counted %+v, exactly %d", seed, it, got, want)
				}
			}
		}
	}
}

// TestExpiryEmptiesTheWindow checks that once the window has moved past all
// events nothing of them remains: the state is that of a fresh window
// advanced to the same watermark, with the same statistics.
func TestExpiryEmptiesTheWindow(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		cfg := randomConfig(rng)
		w := newWindow(cfg)
		o := newExact(cfg)
		st := newStream(seed, 30)
		for range 300 {
			st.step(w, o)
		}
		// Slide one slot at a time so that the ordinary expiry path, not
		// the clear-all shortcut, does the work.
		end := st.now.Add(cfg.window + cfg.lookahead + time.Duration(w.bslots+1)*cfg.slide)
		for t := st.now; !t.After(end); t = t.Add(cfg.slide) {
			w.Advance(t)
		}
		fresh := newWindow(cfg)
		fresh.Advance(end)
		fresh.stats = w.stats
		fresh.newest = w.newest
		a, _ := w.MarshalBinary()
		b, _ := fresh.MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Fatalf("seed %d: state after expiry differs from an empty window (%d vs %d bytes)", seed, len(a), len(b))
		}
	}
}

// TestMergeMatchesOracle merges windows fed with different random streams
// and checks the merged bounds against the sum of their oracles, and that
// merging is commutative (byte-identical) even when the union of candidates
// overflows and the windows end at different times.
func TestMergeMatchesOracle(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 4))
		cfg := randomConfig(rng)
		st := newStream(seed, 30)
		ws := []*Window{newWindow(cfg), newWindow(cfg)}
		os := []*exact.Counter{newExact(cfg), newExact(cfg)}
		start := st.now
		for i := range ws {
			st.now = start.Add(time.Duration(rng.IntN(3)) * cfg.slide)
			for range 200 {
				st.step(ws[i], os[i])
			}
		}
		ab, ba := ws[0].Clone(), ws[1].Clone()
		if err := ab.Merge(ws[1]); err != nil {
			t.Fatal(err)
		}
		if err := ba.Merge(ws[0]); err != nil {
			t.Fatal(err)
		}
		x, _ := ab.MarshalBinary()
		y, _ := ba.MarshalBinary()
		if !bytes.Equal(x, y) {
			t.Fatalf("seed %d: a.Merge(b) and b.Merge(a) differ", seed)
		}
		// The oracle of the merge: both oracles merged.
		sum := os[0].Clone()
		if err := sum.Merge(os[1]); err != nil {
			t.Fatal(err)
		}
		verify(t, ab, sum, st.items)
		// The merged window goes on like any other.
		for range 100 {
			st.step(ab, sum)
			verify(t, ab, sum, st.items)
		}
	}
}

// TestMergeOrderIndependent merges three windows at the same end whose
// candidates fit in all groupings and orders: the results are
// byte-identical.
func TestMergeOrderIndependent(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 5))
		cfg := randomConfig(rng)
		st := newStream(seed, 3+rng.IntN(6))
		cfg.candidates = max(cfg.k, len(st.items))
		var ws []*Window
		var end time.Time
		for range 3 {
			w, o := newWindow(cfg), newExact(cfg)
			for range 150 {
				st.step(w, o)
			}
			end = st.now
			ws = append(ws, w)
		}
		for _, w := range ws {
			w.Advance(end)
		}
		var want []byte
		for _, perm := range [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
			a, b, c := ws[perm[0]], ws[perm[1]], ws[perm[2]]
			left := a.Clone() // (a+b)+c
			mustMerge(t, left, b)
			mustMerge(t, left, c)
			bc := b.Clone() // a+(b+c)
			mustMerge(t, bc, c)
			right := a.Clone()
			mustMerge(t, right, bc)
			for _, got := range []*Window{left, right} {
				enc, _ := got.MarshalBinary()
				if want == nil {
					want = enc
				} else if !bytes.Equal(enc, want) {
					t.Fatalf("seed %d: merge order %v gives a different state", seed, perm)
				}
			}
		}
	}
}

func mustMerge(t *testing.T, w, other *Window) {
	t.Helper()
	if err := w.Merge(other); err != nil {
		t.Fatal(err)
	}
	if err := w.check(); err != nil {
		t.Fatalf("after merge: %v", err)
	}
}

// TestMergeTopKOrderIndependent checks MergeTopK over disjoint lists against
// the exact top k of their union, in every order.
func TestMergeTopKOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for round := range 200 {
		var lists [][]Item
		var all []Item
		for p := range 1 + rng.IntN(5) {
			var l []Item
			for i := range rng.IntN(12) {
				it := Item{Item: fmt.Sprintf("p%d-%d", p, i), Count: uint64(rng.IntN(20))}
				it.Error = uint64(rng.IntN(int(it.Count) + 1))
				l = append(l, it)
			}
			lists = append(lists, l)
			all = append(all, l...)
		}
		k := 1 + rng.IntN(10)
		slices.SortFunc(all, compareItems)
		want := all[:min(k, len(all))]
		for range 5 {
			rng.Shuffle(len(lists), func(i, j int) { lists[i], lists[j] = lists[j], lists[i] })
			if got := MergeTopK(k, lists...); !slices.Equal(got, want) {
				t.Fatalf("round %d: MergeTopK = %v, want %v", round, got, want)
			}
		}
	}
}

// TestFirstSortedIsTheSortedPrefix checks firstSorted against a full sort,
// on lists with many ties of count, item or both, for every k.
func TestFirstSortedIsTheSortedPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	for round := range 300 {
		items := make([]Item, rng.IntN(40))
		for i := range items {
			items[i] = Item{Item: fmt.Sprintf("t%d", rng.IntN(8)), Count: uint64(rng.IntN(6)), Error: uint64(rng.IntN(3))}
		}
		want := slices.Clone(items)
		slices.SortFunc(want, compareItems)
		for k := 1; k <= len(items)+1; k++ {
			got := firstSorted(slices.Clone(items), k)
			if w := want[:min(k, len(want))]; !slices.Equal(got, w) {
				t.Fatalf("round %d, k %d: firstSorted(%v) = %v, want %v", round, k, items, got, w)
			}
		}
	}
}
