package friends

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func add(f string, ts int64) Op    { return Op{Friend: f, Add: true, TSMs: ts} }
func remove(f string, ts int64) Op { return Op{Friend: f, TSMs: ts} }

func TestWinsTieRule(t *testing.T) {
	for _, tc := range []struct {
		a, b Op
		want bool
	}{
		{add("f", 2), remove("f", 1), true},
		{remove("f", 1), add("f", 2), false},
		{remove("f", 5), add("f", 5), true}, // equal ts: the removal wins
		{add("f", 5), remove("f", 5), false},
		{add("f", 5), add("f", 5), false}, // the same op
		{remove("f", 5), remove("f", 5), false},
	} {
		if got := Wins(tc.a, tc.b); got != tc.want {
			t.Errorf("Wins(%+v, %+v) = %v", tc.a, tc.b, got)
		}
	}
}

func TestApplyLastWriterWins(t *testing.T) {
	var s State
	steps := []struct {
		op      Op
		friends []string
		changed bool
	}{
		{add("b", 10), []string{"b"}, true},
		{add("b", 10), []string{"b"}, false},   // a redelivery
		{remove("b", 5), []string{"b"}, false}, // older: loses
		{add("a", 3), []string{"a", "b"}, true},
		{remove("b", 10), []string{"a"}, true}, // equal ts: the removal wins
		{add("b", 10), []string{"a"}, false},   // and keeps winning whatever the order
		{add("b", 11), []string{"a", "b"}, true},
		{remove("a", 2), []string{"a", "b"}, false},
	}
	for i, st := range steps {
		res := s.Apply(st.op)
		if res.Changed != st.changed || res.Refused != nil || !slices.Equal(s.Friends(), st.friends) || s.Len() != len(st.friends) {
			t.Fatalf("step %d %+v: %+v, friends %v, want %v changed %v", i, st.op, res, s.Friends(), st.friends, st.changed)
		}
	}
	if res := s.Apply(remove("zz", 1)); res.Pair != remove("zz", 1) || !res.Changed {
		t.Fatalf("a removal of a pair never seen: %+v", res)
	}
}

// TestApplyIsOrderIndependent: any order of a set of ops on a few pairs, each delivered one
// to three times, leaves the same state (no bound reached).
func TestApplyIsOrderIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		var ops []Op
		for range 40 {
			op := Op{Friend: fmt.Sprint("f", rng.IntN(6)), Add: rng.IntN(2) == 0, TSMs: rng.Int64N(8)}
			for range 1 + rng.IntN(3) {
				ops = append(ops, op)
			}
		}
		var want State
		for _, o := range ops {
			want.Apply(o)
		}
		for range 5 {
			rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
			var s State
			for _, o := range ops {
				s.Apply(o)
			}
			if !slices.Equal(s.Pairs, want.Pairs) || s.Len() != want.Len() {
				t.Fatalf("round %d: %+v, want %+v", round, s.Pairs, want.Pairs)
			}
		}
	}
}

func TestApplyRefusesPastMaxFriends(t *testing.T) {
	var s State
	for i := range MaxFriends {
		if res := s.Apply(add(fmt.Sprint("f", i), 1)); res.Refused != nil {
			t.Fatalf("add %d refused: %v", i, res.Refused)
		}
	}
	res := s.Apply(add("over", 7))
	if !errors.Is(res.Refused, ErrTooManyFriends) || res.Pair != remove("over", 7) || !res.Changed || s.Len() != MaxFriends {
		t.Fatalf("the add past the bound: %+v, %d friends", res, s.Len())
	}
	// Its redelivery is refused again, without a change; an add of a friend already there
	// and a later add after a removal are not refused.
	if res := s.Apply(add("over", 7)); !errors.Is(res.Refused, ErrTooManyFriends) || res.Changed {
		t.Fatalf("the redelivery: %+v", res)
	}
	if res := s.Apply(add("f1", 9)); res.Refused != nil || !res.Changed {
		t.Fatalf("a newer add of a friend: %+v", res)
	}
	s.Apply(remove("f2", 9))
	if res := s.Apply(add("over", 8)); res.Refused != nil || res.Pair != add("over", 8) || s.Len() != MaxFriends {
		t.Fatalf("an add after a removal made room: %+v, %d friends", res, s.Len())
	}
	// A removal at the same ts as a refused add is not a refusal.
	if res := s.Apply(remove("f3", 1)); res.Refused != nil || !res.Changed {
		t.Fatalf("a removal: %+v", res)
	}
	if res := s.Apply(add("f3", 1)); res.Refused != nil || res.Changed {
		t.Fatalf("an add losing to a removal at its ts: %+v", res)
	}
}

func TestApplyForgetsOldestRemovals(t *testing.T) {
	var s State
	for i := range MaxRemoved + 3 {
		s.Apply(remove(fmt.Sprintf("r%05d", i), int64(100+i)))
	}
	if n := len(s.Pairs); n != MaxRemoved || s.FloorMs != 103 {
		t.Fatalf("%d removals remembered, floor %d; want %d and 103", n, s.FloorMs, MaxRemoved)
	}
	// A stale add of a forgotten pair is refused; one after the floor is applied.
	if res := s.Apply(add("r00001", 101)); !errors.Is(res.Refused, ErrForgotten) || res.Pair.Add {
		t.Fatalf("a stale add: %+v", res)
	}
	if res := s.Apply(add("new", 103)); res.Refused != nil || !res.Pair.Add {
		t.Fatalf("an add after the floor: %+v", res)
	}
	if res := s.Apply(add("r00500", 50)); res.Refused != nil || res.Pair.Add {
		t.Fatalf("an older add of a remembered removal: %+v", res)
	}
}

func TestStateCodecRoundTrips(t *testing.T) {
	var s State
	s.Apply(add("b", 1))
	s.Apply(remove("a", 2))
	for i := range MaxRemoved + 1 {
		s.Apply(remove(fmt.Sprint("r", i), 3))
	}
	for i := range MaxFriends - 1 {
		s.Apply(add(fmt.Sprint("f", i), 4))
	}
	s.Apply(add("over", 5))
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got State
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Pairs, s.Pairs) || got.FloorMs != s.FloorMs || got.Len() != MaxFriends {
		t.Fatalf("round trip changed the state (%d friends)", got.Len())
	}
	t.Logf("a full state is %d bytes", len(b))
	for name, bad := range map[string][]byte{
		"empty":         nil,
		"version 2":     append([]byte{2}, b[1:]...),
		"trailing byte": append(slices.Clone(b), 0),
		"cut":           b[:len(b)-1],
		"unsorted": func() []byte {
			x := State{Pairs: []Pair{{Op: add("b", 1)}, {Op: add("a", 1)}}}
			e, _ := x.MarshalBinary()
			return e
		}(),
		"refused add": func() []byte {
			x := State{Pairs: []Pair{{Op: add("a", 1), Refused: RefusedTooMany}}}
			e, _ := x.MarshalBinary()
			return e
		}(),
	} {
		if err := got.UnmarshalBinary(bad); !errors.Is(err, ErrCorruptState) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzStateUnmarshalBinary(f *testing.F) {
	var s State
	s.Apply(add("b", 1))
	s.Apply(remove("a", 2))
	b, _ := s.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		var s State
		if s.UnmarshalBinary(data) != nil {
			return
		}
		again, _ := s.MarshalBinary()
		var back State
		if err := back.UnmarshalBinary(again); err != nil || !slices.Equal(back.Pairs, s.Pairs) || back.FloorMs != s.FloorMs || back.Len() != s.Len() {
			t.Fatalf("decoded %x, which encodes as %x and decodes as %+v (%v)", data, again, back, err)
		}
	})
}
