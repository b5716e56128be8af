package redis

import (
	"testing"

	"github.com/rankstream/rankstream/board"
)

// TestKeysReadBack: what BoardScopes finds by SCAN is read back into the keys its answer is
// looked up by (ScopesKey, StepsScopesKey), and no other key of a board is taken for a scope
// board.
func TestKeysReadBack(t *testing.T) {
	d := board.Day(20261130)
	ref := BoardRef{Board: "arena", Period: board.PeriodDay, PeriodID: "20261130", Scope: "eu", Shards: 2}
	total := BoardRef{Board: "arena", Period: board.PeriodTotal, Scope: "us", Shards: 1}
	for _, tc := range []struct {
		key, scopesKey, scope string
	}{
		{ScoreBoardKey(ref, 1), ScopesKey(ref), "eu"},
		{ScoreBoardKey(total, 0), ScopesKey(total), "us"},
		{StepsRegionBoard("eu-west", d), StepsScopesKey(d), "eu-west"},
		{ScoreBoardKey(BoardRef{Board: "arena", Period: board.PeriodDay, PeriodID: "20261130", Shards: 1}, 0), "", ""},
		{ScoreBoardMembersKey(ref, 0), "", ""},
		{ArchivedKey(ScoreBoardKey(ref, 0)), "", ""},
		{StepsGlobalBoard(d), "", ""},
		{StepKey(d, "u1"), "", ""},
	} {
		k, scope, ok := scopeBoardOf(tc.key)
		if ok != (tc.scopesKey != "") || k != tc.scopesKey || scope != tc.scope {
			t.Errorf("%s: %q %q %v, want %q %q", tc.key, k, scope, ok, tc.scopesKey, tc.scope)
		}
	}
	if got, want := ScopesKey(ref), "arena:d:20261130"; got != want {
		t.Errorf("ScopesKey %q, want %q", got, want)
	}
	if got, want := ScoreBoardPattern(ref), "rank:{arena:d:20261130:s:eu:*}"; got != want {
		t.Errorf("ScoreBoardPattern %q, want %q", got, want)
	}
	if u, ok := userOfStepKey(StepKey(d, "u1"), d); !ok || u != "u1" {
		t.Errorf("userOfStepKey: %q %v", u, ok)
	}
	if isStepKeyOf(StepKey(d.AddDays(-1), "u1"), d) {
		t.Error("a step key of the day before taken for one of the day")
	}
	if r := regionOfStepsBoard(StepsRegionBoard("eu", d), d); r != "eu" {
		t.Errorf("regionOfStepsBoard: %q", r)
	}
}
