package steps

import (
	"testing"

	"github.com/rankstream/rankstream/internal/board"
)

func TestSentSkipsOnlyWhatWasHandedUnchanged(t *testing.T) {
	var s sent
	for i, c := range []struct {
		partition int32
		user      string
		day       board.Day
		changed   bool // the record changed the day's effect (Outcome Improved)
		fresh     bool
	}{
		{0, "u", 20261130, true, true},
		{0, "u", 20261130, false, false}, // the same effect again
		{1, "u", 20261130, false, true},  // another partition knows nothing of it
		{0, "u", 20261130, true, true},   // more steps, another reach time, a move
		{0, "u", 20261130, false, false}, // the same effect as the last handed
		{0, "u", 20261201, false, true},  // another day
		{0, "v", 20261130, false, true},  // another user
		{0, "v", 20261130, false, false},
	} {
		if got := s.fresh(c.partition, c.user, c.day, c.changed); got != c.fresh {
			t.Fatalf("step %d: fresh(%d, %s, %v, changed %v) = %v, want %v", i, c.partition, c.user, c.day, c.changed, got, c.fresh)
		}
	}
}

func TestSentForgetsAtARebalance(t *testing.T) {
	var s sent
	s.fresh(3, "u", 20261130, true)
	s.rebalanced()
	if !s.fresh(3, "u", 20261130, false) {
		t.Fatal("after a rebalance the first update of a user-day must be handed again")
	}
	if s.fresh(3, "u", 20261130, false) {
		t.Fatal("the second one since the rebalance must not")
	}
}

func TestSentForgetsPastItsBound(t *testing.T) {
	var s sent
	s.fresh(0, "first", 20261130, true)
	for i := range maxSentPerPartition {
		s.fresh(0, "u", board.Day(i), true)
	}
	if !s.fresh(0, "first", 20261130, false) {
		t.Fatal("past the bound the memory must be forgotten (re-sending), not grow")
	}
	v, _ := s.parts.Load(int32(0))
	if n := len(v.(*partitionSent).days); n > maxSentPerPartition {
		t.Fatalf("%d user-days remembered, bound %d", n, maxSentPerPartition)
	}
}
