package steps

import (
	"testing"

	"github.com/rankstream/rankstream/internal/board"
)

func TestSentSkipsOnlyWhatWasHandedUnchanged(t *testing.T) {
	var s sent
	u := func(steps, reached int64, region string, left ...string) *board.StepUpdate {
		return &board.StepUpdate{User: "u", Day: 20261130, Steps: steps, ReachedMs: reached, Region: region, Left: left}
	}
	for i, c := range []struct {
		partition int32
		u         *board.StepUpdate
		fresh     bool
	}{
		{0, u(100, 1, "eu"), true},
		{0, u(100, 1, "eu"), false},        // the same effect again
		{1, u(100, 1, "eu"), true},         // another partition knows nothing of it
		{0, u(200, 2, "eu"), true},         // more steps
		{0, u(200, 3, "eu"), true},         // another reach time
		{0, u(200, 3, "us", "eu"), true},   // moved
		{0, u(200, 3, "us", "eu"), false},  // the same move again
		{0, u(200, 3, "us", "asia"), true}, // other regions left
		{0, &board.StepUpdate{User: "u", Day: 20261201, Steps: 200, ReachedMs: 3, Region: "us", Left: []string{"asia"}}, true}, // another day
		{0, &board.StepUpdate{User: "v", Day: 20261130, Steps: 200, ReachedMs: 3, Region: "us", Left: []string{"asia"}}, true}, // another user
	} {
		if got := s.fresh(c.partition, c.u); got != c.fresh {
			t.Fatalf("step %d: fresh(%d, %+v) = %v, want %v", i, c.partition, c.u, got, c.fresh)
		}
	}
}

func TestSentForgetsAtARebalance(t *testing.T) {
	var s sent
	u := &board.StepUpdate{User: "u", Day: 20261130, Steps: 100, ReachedMs: 1}
	s.fresh(3, u)
	s.rebalanced()
	if !s.fresh(3, u) {
		t.Fatal("after a rebalance the first update of a user-day must be handed again")
	}
	if s.fresh(3, u) {
		t.Fatal("the second one since the rebalance must not")
	}
}

func TestSentForgetsPastItsBound(t *testing.T) {
	var s sent
	first := &board.StepUpdate{User: "first", Day: 20261130, Steps: 1}
	s.fresh(0, first)
	for i := range maxSentPerPartition {
		s.fresh(0, &board.StepUpdate{User: "u", Day: board.Day(i), Steps: 1})
	}
	if !s.fresh(0, first) {
		t.Fatal("past the bound the memory must be forgotten (re-sending), not grow")
	}
	v, _ := s.parts.Load(int32(0))
	if n := len(v.(*partitionSent).days); n > maxSentPerPartition {
		t.Fatalf("%d user-days remembered, bound %d", n, maxSentPerPartition)
	}
}

// TestSentLeftIsCopied: the remembered regions left are the sink's to keep, not the state's.
func TestSentLeftIsCopied(t *testing.T) {
	var s sent
	left := []string{"eu"}
	s.fresh(0, &board.StepUpdate{User: "u", Day: 1, Region: "us", Left: left})
	left[0] = "asia"
	if s.fresh(0, &board.StepUpdate{User: "u", Day: 1, Region: "us", Left: []string{"eu"}}) {
		t.Fatal("changing the caller's slice changed what was remembered")
	}
}
