package reconcile

import (
	"testing"

	"github.com/rankstream/rankstream/board"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// TestDiffStepsClasses: each way Redis can differ from the table lands in its class, once;
// what agrees is no difference.
func TestDiffStepsClasses(t *testing.T) {
	d := board.Day(20261130)
	c := board.DayComposite(d)
	ms := d.FirstInstant().UnixMilli() + 3_600_000
	score := func(steps, at int64) float64 {
		v, err := c.Encode(steps, at)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	truth := map[string]*board.StepUpdate{
		"ok":    {User: "ok", Day: d, Steps: 10, ReachedMs: ms, Region: "east"},
		"nokey": {User: "nokey", Day: d, Steps: 11, ReachedMs: ms},
		"stale": {User: "stale", Day: d, Steps: 12, ReachedMs: ms},
		"order": {User: "order", Day: d, Steps: 13, ReachedMs: ms},
		"moved": {User: "moved", Day: d, Steps: 14, ReachedMs: ms, Region: "west", Left: []string{"east"}},
	}
	got := rsredis.StepsDay{
		Values: map[string]int64{"ok": 10, "stale": 11, "order": 13, "moved": 14, "stranger": 1},
		Boards: map[string]map[string]float64{
			"":     {"ok": score(10, ms), "nokey": score(11, ms), "stale": score(12, ms), "order": score(13, ms+1), "moved": score(14, ms)},
			"east": {"ok": score(10, ms), "moved": score(14, ms)},
			"west": {"stranger": score(1, ms)},
		},
	}
	want := []struct{ class, key, member string }{
		{Missing, "step:20261130:nokey", ""},
		{Stale, "step:20261130:stale", ""},
		{WrongOrder, "rank:steps:global:20261130", "order"},
		{Missing, "rank:steps:region:west:20261130", "moved"},
		{Extra, "step:20261130:stranger", ""},
		{Extra, "rank:steps:region:east:20261130", "moved"},
		{Extra, "rank:steps:region:west:20261130", "stranger"},
	}
	diffs := diffSteps(d, truth, got)
	if len(diffs) != len(want) {
		t.Fatalf("%d differences, want %d: %v", len(diffs), len(want), diffs)
	}
	for _, w := range want {
		found := false
		for _, x := range diffs {
			found = found || x.Class == w.class && x.Key == w.key && x.Member == w.member
		}
		if !found {
			t.Errorf("no %s difference on %s %s in %v", w.class, w.key, w.member, diffs)
		}
	}
}

// TestDiffScoresClasses: a member missing from its scope board, one with another reach time,
// one deleted in the table but on the board, one on a scope it left, a stranger.
func TestDiffScoresClasses(t *testing.T) {
	ref := rsredis.BoardRef{Board: "arena", Period: board.PeriodTotal, Shards: 2}
	truth := map[string]board.ScoreUpdate{
		"ok":      {Member: "ok", Present: true, Score: 5, ReachedMs: 1, Scope: "eu"},
		"noscope": {Member: "noscope", Present: true, Score: 6, ReachedMs: 1, Scope: "eu"},
		"order":   {Member: "order", Present: true, Score: 7, ReachedMs: 1},
		"deleted": {Member: "deleted"},
		"left":    {Member: "left", Present: true, Score: 8, ReachedMs: 1, Scope: "us", Left: []string{"eu"}},
	}
	rk := func(m string, score, ms int64) rsredis.Ranked {
		return rsredis.Ranked{Member: m, Score: score, ReachedMs: ms}
	}
	got := map[string]map[string]rsredis.Ranked{
		"": {"ok": rk("ok", 5, 1), "noscope": rk("noscope", 6, 1), "order": rk("order", 7, 2), "deleted": rk("deleted", 1, 1),
			"left": rk("left", 8, 1), "stranger": rk("stranger", 1, 1)},
		"eu": {"ok": rk("ok", 5, 1), "left": rk("left", 8, 1)},
		"us": {"left": rk("left", 8, 1)},
	}
	want := map[string]int{Missing: 1, WrongOrder: 1, Extra: 3}
	diffs := diffScores(ref, truth, got)
	for class, n := range want {
		if c := countOf(diffs, class); c != n {
			t.Errorf("%d %s, want %d: %v", c, class, n, diffs)
		}
	}
	if len(diffs) != 5 {
		t.Errorf("%d differences, want 5: %v", len(diffs), diffs)
	}
}

// TestScoreWindow: --period by kind (the window holding the day's noon in the board's zone),
// by id, total; an hour needs its id.
func TestScoreWindow(t *testing.T) {
	b, err := board.NewBoard(board.Spec{Name: "arena", Periods: []string{"h", "d", "w", "total"}, TZ: "Asia/Shanghai", Retention: "30d"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ period, id string }{
		{"d", "20261130"}, {"w", "2026W49"}, {"total", "total"}, {"d:20261129", "20261129"}, {"h:2026113009", "2026113009"},
		{"h", ""}, {"m", ""}, {"d:2026-11-29", ""},
	} {
		w, err := scoreWindow(b, 20261130, tc.period)
		if tc.id == "" {
			if err == nil {
				t.Errorf("%s: %v, want an error", tc.period, w)
			}
			continue
		}
		if err != nil || w.ID != tc.id {
			t.Errorf("%s: %v %v, want %s", tc.period, w, err, tc.id)
		}
	}
}
