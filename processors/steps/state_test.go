package steps

import (
	"errors"
	"reflect"
	"testing"

	"github.com/rankstream/rankstream/internal/rank"
)

func TestApplyMergeRules(t *testing.T) {
	const day = rank.Day(20261130)
	type step struct {
		r        Report
		want     Outcome
		steps    int64
		reached  int64
		region   string
		previous string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"max wins and smaller values are dropped", []step{
			{Report{1, day, 100, 1000, "eu"}, Improved, 100, 1000, "eu", ""},
			{Report{2, day, 300, 3000, "eu"}, Improved, 300, 3000, "eu", ""},
			{Report{3, day, 200, 2000, "eu"}, Stale, 300, 3000, "eu", ""},
			{Report{4, day, 250, 4000, "eu"}, Stale, 300, 3000, "eu", ""},
		}},
		{"duplicate request ids change nothing", []step{
			{Report{7, day, 100, 1000, ""}, Improved, 100, 1000, "", ""},
			{Report{7, day, 900, 500, "eu"}, Duplicate, 100, 1000, "", ""},
			{Report{7, day, 100, 1000, ""}, Duplicate, 100, 1000, "", ""},
		}},
		{"an equal value reached earlier moves the reach time back", []step{
			{Report{1, day, 500, 9000, ""}, Improved, 500, 9000, "", ""},
			{Report{2, day, 500, 5000, ""}, Improved, 500, 5000, "", ""},
			{Report{3, day, 500, 7000, ""}, Stale, 500, 5000, "", ""},
		}},
		{"zero steps start a day", []step{
			{Report{1, day, 0, 10, ""}, Improved, 0, 10, "", ""},
		}},
		{"a region change reports the region left", []step{
			{Report{1, day, 10, 10, "eu"}, Improved, 10, 10, "eu", ""},
			{Report{2, day, 20, 20, "us"}, Improved, 20, 20, "us", "eu"},
			{Report{3, day, 30, 30, ""}, Improved, 30, 30, "us", ""},
			{Report{4, day, 5, 40, "asia"}, Stale, 30, 30, "us", ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s State
			for i, st := range tt.steps {
				d, out, prev := s.Apply(st.r, 0)
				if out != st.want || d.Steps != st.steps || d.ReachedMs != st.reached || d.Region != st.region || prev != st.previous {
					t.Fatalf("step %d: got %v steps=%d reached=%d region=%q prev=%q; want %v %d %d %q %q",
						i, out, d.Steps, d.ReachedMs, d.Region, prev, st.want, st.steps, st.reached, st.region, st.previous)
				}
			}
		})
	}
}

func TestApplyKeepsDaysApartAndPrunesOldOnes(t *testing.T) {
	var s State
	s.Apply(Report{1, 20261128, 50, 1, ""}, 0)
	s.Apply(Report{2, 20261130, 70, 3, ""}, 0)
	s.Apply(Report{3, 20261129, 60, 2, ""}, 0)
	if len(s.Days) != 3 || s.Days[0].Day != 20261128 || s.Days[1].Day != 20261129 || s.Days[2].Day != 20261130 {
		t.Fatalf("days not kept in order: %+v", s.Days)
	}
	// The same request id on another day is another report.
	if _, out, _ := s.Apply(Report{1, 20261130, 80, 4, ""}, 0); out != Improved {
		t.Fatalf("request id of another day treated as %v", out)
	}
	s.Apply(Report{9, 20261130, 90, 5, ""}, 20261129)
	if len(s.Days) != 2 || s.Days[0].Day != 20261129 {
		t.Fatalf("old day not pruned: %+v", s.Days)
	}
}

func TestApplyOrderIndependence(t *testing.T) {
	reports := []Report{
		{1, 20261130, 10, 100, "eu"}, {2, 20261130, 40, 400, "eu"}, {3, 20261130, 40, 300, "eu"},
		{4, 20261130, 20, 200, "eu"}, {2, 20261130, 40, 400, "eu"}, {5, 20261129, 7, 1, "eu"},
	}
	want := map[rank.Day][2]int64{20261130: {40, 300}, 20261129: {7, 1}}
	perm := []int{0, 1, 2, 3, 4, 5}
	for range 50 {
		var s State
		for _, i := range perm {
			s.Apply(reports[i], 0)
		}
		for _, d := range s.Days {
			if w := want[d.Day]; d.Steps != w[0] || d.ReachedMs != w[1] {
				t.Fatalf("order %v: day %v = %d@%d, want %d@%d", perm, d.Day, d.Steps, d.ReachedMs, w[0], w[1])
			}
		}
		// next permutation (rotate and swap: enough variety for 6 elements)
		perm = append(perm[1:], perm[0])
		perm[0], perm[len(perm)/2] = perm[len(perm)/2], perm[0]
	}
}

func TestRequestMemoryIsBounded(t *testing.T) {
	var s State
	for i := range MaxRequestsPerDay + 10 {
		s.Apply(Report{uint64(i), 20261130, int64(i), 1, ""}, 0)
	}
	if n := len(s.Days[0].Requests); n != MaxRequestsPerDay {
		t.Fatalf("%d request ids kept, want %d", n, MaxRequestsPerDay)
	}
}

func TestStateBinaryRoundTrip(t *testing.T) {
	var s State
	s.Apply(Report{1, 20261129, 60, 2, "eu-west"}, 0)
	s.Apply(Report{2, 20261130, 70, 3, ""}, 0)
	s.Apply(Report{3, 20261130, 80, 4, ""}, 0)
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var got State
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip: got %+v, want %+v", got, s)
	}
	for i := range len(b) {
		keep := got
		if err := got.UnmarshalBinary(b[:i]); !errors.Is(err, ErrCorruptState) {
			t.Fatalf("truncated to %d bytes: err = %v", i, err)
		}
		if !reflect.DeepEqual(got, keep) {
			t.Fatal("failed unmarshal touched the receiver")
		}
	}
}

func FuzzStateUnmarshalBinary(f *testing.F) {
	var s State
	s.Apply(Report{1, 20261129, 60, 2, "eu"}, 0)
	b, _ := s.MarshalBinary()
	f.Add(b)
	f.Add([]byte{stateVersion, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		var s State
		if err := s.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var s2 State
		if err := s2.UnmarshalBinary(again); err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("re-encoding an accepted state fails: %v", err)
		}
	})
}
