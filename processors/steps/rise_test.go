package steps

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
)

// TestRiseLimit: the rise per minute at its edge and one step past it, from the day's start
// and from the day's value, and what a refused report leaves (nothing: not even its id).
func TestRiseLimit(t *testing.T) {
	lim := Limits{MaxRisePerMinute: 250}
	day := board.Day(20261130)
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).UnixMilli()
	at := func(minutes float64) int64 { return start + int64(minutes*60_000) }
	type step struct {
		r       Report
		tooFast bool
	}
	tests := []struct {
		name  string
		steps []step
		want  int64 // the day's steps afterwards
	}{
		{"from the day's start: 250 a minute, not one more", []step{
			{Report{1, day, 2501, at(10), ""}, true},
			{Report{2, day, 2500, at(10), ""}, false},
		}, 2500},
		{"from the day's value: 250 a minute after it was reached", []step{
			{Report{1, day, 10_000, at(60), ""}, false},
			{Report{2, day, 10_000 + 501, at(62), ""}, true},
			{Report{3, day, 10_000 + 500, at(62), ""}, false},
		}, 10_500},
		{"a report at the very start of the day with steps", []step{
			{Report{1, day, 1, at(0), ""}, true},
			{Report{2, day, 0, at(0), ""}, false},
		}, 0},
		{"a stale or equal report is never too fast", []step{
			{Report{1, day, 15_000, at(60), ""}, false},
			{Report{2, day, 14_000, at(60.1), ""}, false},
			{Report{3, day, 15_000, at(61), ""}, false},
		}, 15_000},
		{"an earlier report reaching the value earlier counts from the day's start only", []step{
			{Report{1, day, 3000, at(60), ""}, false},
			{Report{2, day, 3000, at(11), ""}, true},
			{Report{3, day, 3000, at(12), ""}, false},
		}, 3000},
		{"a refused report's id is not used up", []step{
			{Report{1, day, 5000, at(10), ""}, true},
			{Report{1, day, 500, at(10), ""}, false},
		}, 500},
		{"no limit", []step{
			{Report{1, day, 100_000, at(1), ""}, false},
		}, 100_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := lim
			if tt.name == "no limit" {
				l = Limits{}
			}
			var s State
			for i, st := range tt.steps {
				_, err := s.ApplyWithin(st.r, 0, l, start)
				if errors.Is(err, ErrTooFast) != st.tooFast || err != nil && !st.tooFast {
					t.Fatalf("step %d %+v: %v, want too fast %v", i, st.r, err, st.tooFast)
				}
			}
			if len(s.Days) != 1 || s.Days[0].Steps != tt.want {
				t.Fatalf("days %+v, want %d steps", s.Days, tt.want)
			}
		})
	}
}

// TestHumanReadingsAreNeverTooFastInAnyOrder: readings that never fall as time goes on and
// rise at most the limit a minute (from local midnight) are never quarantined, whatever order
// they arrive in, so the merge stays order-independent for them.
func TestHumanReadingsAreNeverTooFastInAnyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 14))
	lim := Limits{MaxRisePerMinute: 250}
	day := board.Day(20261130)
	start := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC).UnixMilli()
	for trial := range 200 {
		var reports []Report
		steps, ts := int64(0), start
		for i := range 30 {
			dt := rng.Int64N(20 * 60_000)
			ts += dt
			steps += rng.Int64N(lim.MaxRisePerMinute*dt/60_000 + 1)
			reports = append(reports, Report{uint64(i), day, steps, ts, ""})
		}
		var want State
		for k, p := range append([][]int{nil}, rng.Perm(len(reports)), rng.Perm(len(reports))) {
			var s State
			for j := range reports {
				r := reports[j]
				if p != nil {
					r = reports[p[j]]
				}
				if _, err := s.ApplyWithin(r, 0, lim, start); err != nil {
					t.Fatalf("trial %d: %+v: %v", trial, r, err)
				}
			}
			if k == 0 {
				want = s
			} else if !reflect.DeepEqual(s.Days[0].Steps, want.Days[0].Steps) || s.Days[0].ReachedMs != want.Days[0].ReachedMs {
				t.Fatalf("trial %d: order %d gives %+v, want %+v", trial, k, s.Days[0], want.Days[0])
			}
		}
	}
}
