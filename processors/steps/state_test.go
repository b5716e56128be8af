package steps

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/e2e"
	"github.com/rankstream/rankstream/topics"
)

func TestApplyMergeRules(t *testing.T) {
	const day = board.Day(20261130)
	type step struct {
		r       Report
		want    Outcome
		steps   int64
		reached int64
		region  string
		left    []string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"max wins and smaller values are dropped", []step{
			{Report{1, day, 100, 1000, "eu"}, Improved, 100, 1000, "eu", nil},
			{Report{2, day, 300, 3000, "eu"}, Improved, 300, 3000, "eu", nil},
			{Report{3, day, 200, 2000, "eu"}, Stale, 300, 3000, "eu", nil},
			{Report{4, day, 250, 4000, "eu"}, Stale, 300, 3000, "eu", nil},
		}},
		{"duplicate request ids change nothing", []step{
			{Report{7, day, 100, 1000, ""}, Improved, 100, 1000, "", nil},
			{Report{7, day, 900, 500, "eu"}, Duplicate, 100, 1000, "", nil},
			{Report{7, day, 100, 1000, ""}, Duplicate, 100, 1000, "", nil},
		}},
		{"an equal value reached earlier moves the reach time back", []step{
			{Report{1, day, 500, 9000, ""}, Improved, 500, 9000, "", nil},
			{Report{2, day, 500, 5000, ""}, Improved, 500, 5000, "", nil},
			{Report{3, day, 500, 7000, ""}, Stale, 500, 5000, "", nil},
		}},
		{"zero steps start a day", []step{
			{Report{1, day, 0, 10, ""}, Improved, 0, 10, "", nil},
		}},
		{"a region change keeps the region left", []step{
			{Report{1, day, 10, 10, "eu"}, Improved, 10, 10, "eu", nil},
			{Report{2, day, 20, 20, "us"}, Improved, 20, 20, "us", []string{"eu"}},
			{Report{3, day, 30, 30, ""}, Improved, 30, 30, "us", []string{"eu"}},
			{Report{4, day, 5, 40, "asia"}, Stale, 30, 30, "us", []string{"eu"}},
			{Report{5, day, 40, 50, "asia"}, Improved, 40, 50, "asia", []string{"eu", "us"}},
			// Back to a region left before: it leaves the list, the one left joins it.
			{Report{6, day, 50, 60, "eu"}, Improved, 50, 60, "eu", []string{"asia", "us"}},
		}},
		{"the region is the best naming report's, in any order", []step{
			{Report{1, day, 30, 30, ""}, Improved, 30, 30, "", nil},
			{Report{2, day, 20, 20, "us"}, Improved, 30, 30, "us", nil},
			{Report{3, day, 10, 10, "eu"}, Stale, 30, 30, "us", nil},
			// Equal steps and time: the smaller region name decides.
			{Report{4, day, 20, 20, "asia"}, Improved, 30, 30, "asia", []string{"us"}},
			{Report{5, day, 20, 20, "zz"}, Stale, 30, 30, "asia", []string{"us"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s State
			for i, st := range tt.steps {
				res, err := s.Apply(st.r, 0)
				d := res.Day
				if err != nil || res.Outcome != st.want || d.Steps != st.steps || d.ReachedMs != st.reached || d.Region != st.region || !slices.Equal(d.Left, st.left) {
					t.Fatalf("step %d: got %v %v steps=%d reached=%d region=%q left=%q; want %v %d %d %q %q",
						i, err, res.Outcome, d.Steps, d.ReachedMs, d.Region, d.Left, st.want, st.steps, st.reached, st.region, st.left)
				}
				if res.Changed != (st.want != Duplicate) {
					t.Fatalf("step %d: %v with Changed=%v", i, res.Outcome, res.Changed)
				}
			}
		})
	}
}

// persisted returns the state as the group table stores it: encoded and decoded.
func persisted(t *testing.T, s *State) *State {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var out State
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return &out
}

// TestRequestIDMergedOnceChangesNothing: a request id merged once, whatever its outcome,
// changes nothing afterwards, also after the state went through its codec (the table); a
// rejected report is not a merge.
func TestRequestIDMergedOnceChangesNothing(t *testing.T) {
	const day = board.Day(20261130)
	tests := []struct {
		name   string
		first  []Report // merged before the retry, with the id under test last
		retry  Report
		steps  int64
		region string
	}{
		{"first improved, retry larger", []Report{{7, day, 100, 1000, "eu"}}, Report{7, day, 900, 500, "us"}, 100, "eu"},
		{"first improved, retry smaller", []Report{{7, day, 100, 1000, "eu"}}, Report{7, day, 5, 500, "us"}, 100, "eu"},
		{"first stale, retry larger", []Report{{1, day, 500, 1000, "eu"}, {7, day, 0, 2000, "eu"}}, Report{7, day, 36_894, 2000, "us"}, 500, "eu"},
		{"first stale, retry earlier with the same value", []Report{{1, day, 500, 1000, "eu"}, {7, day, 500, 2000, "us"}}, Report{7, day, 500, 10, "asia"}, 500, "eu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := new(State)
			for _, r := range tt.first {
				res, err := s.Apply(r, 0)
				if err != nil || !res.Changed {
					t.Fatalf("first reports: %+v %v", res, err)
				}
			}
			s = persisted(t, s)
			res, err := s.Apply(tt.retry, 0)
			if err != nil || res.Outcome != Duplicate || res.Changed || res.Day.Steps != tt.steps || res.Day.Region != tt.region {
				t.Fatalf("retry: %+v %v; want an unchanged duplicate with %d steps in %q", res, err, tt.steps, tt.region)
			}
		})
	}
	t.Run("first rejected, retry merged", func(t *testing.T) {
		s := new(State)
		for i := range MaxRegionsPerDay {
			if _, err := s.Apply(Report{uint64(100 + i), day, int64(i), 1, fmt.Sprintf("r%02d", i)}, 0); err != nil {
				t.Fatal(err)
			}
		}
		res, err := s.Apply(Report{7, day, 1000, 1, "one-too-many"}, 0)
		if !errors.Is(err, ErrTooManyRegions) || res.Changed {
			t.Fatalf("17th region: %+v %v, want ErrTooManyRegions and no change", res, err)
		}
		if d := s.Days[0]; d.Steps != MaxRegionsPerDay-1 || slices.Contains(d.Requests, 7) {
			t.Fatalf("a rejected report changed the day: %+v", d)
		}
		s = persisted(t, s)
		res, err = s.Apply(Report{7, day, 1000, 1, "r03"}, 0)
		if err != nil || res.Outcome != Improved || res.Day.Steps != 1000 || res.Day.Region != "r03" || len(res.Day.Left) != MaxRegionsPerDay-1 {
			t.Fatalf("retry in a region already held: %+v %v", res, err)
		}
	})
}

func TestRegionsPerDayAreBounded(t *testing.T) {
	const day = board.Day(20261130)
	var s State
	for i := range MaxRegionsPerDay {
		if _, err := s.Apply(Report{uint64(i), day, int64(i), 1, fmt.Sprintf("r%02d", i)}, 0); err != nil {
			t.Fatalf("region %d of %d: %v", i+1, MaxRegionsPerDay, err)
		}
	}
	if _, err := s.Apply(Report{99, day, 99, 1, "r99"}, 0); !errors.Is(err, ErrTooManyRegions) || !strings.Contains(err.Error(), `"r99"`) {
		t.Fatalf("region %d: %v", MaxRegionsPerDay+1, err)
	}
	// Stale reports naming a new region and reports without one are still merged.
	if res, err := s.Apply(Report{100, day, 1, 1, "r99"}, 0); err != nil || res.Outcome != Stale {
		t.Fatalf("stale report in a new region: %+v %v", res, err)
	}
	if res, err := s.Apply(Report{101, day, 500, 1, ""}, 0); err != nil || res.Outcome != Improved || res.Day.Region != "r15" {
		t.Fatalf("report without a region: %+v %v", res, err)
	}
	// Another day has its own bound.
	if _, err := s.Apply(Report{102, day + 1, 5, 1, "r99"}, 0); err != nil {
		t.Fatal(err)
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
	if res, _ := s.Apply(Report{1, 20261130, 80, 4, ""}, 0); res.Outcome != Improved {
		t.Fatalf("request id of another day treated as %v", res.Outcome)
	}
	s.Apply(Report{9, 20261130, 90, 5, ""}, 20261129)
	if len(s.Days) != 2 || s.Days[0].Day != 20261129 {
		t.Fatalf("old day not pruned: %+v", s.Days)
	}
}

// TestApplyOrderIndependence: for random reports of one user (ties, regions and no region,
// request ids retried with other values, several days), every order that keeps each request
// id's first merged report first gives the same days, and every region an update ever named
// is the day's region or among the regions left (so the boards end the same).
func TestApplyOrderIndependence(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	regions := []string{"", "eu", "us", "asia", "af"}
	for trial := range 200 {
		var reports []Report
		for i := range 1 + rng.IntN(30) {
			if i > 0 && rng.IntN(4) == 0 { // a retry of an earlier id, maybe with other values
				r := reports[rng.IntN(len(reports))]
				r.Steps, r.TSMs, r.Region = rng.Int64N(50), rng.Int64N(5), regions[rng.IntN(len(regions))]
				reports = append(reports, r)
				continue
			}
			reports = append(reports, Report{uint64(i), 20261129 + board.Day(rng.IntN(2)), rng.Int64N(50), rng.Int64N(5), regions[rng.IntN(len(regions))]})
		}
		var want []DayState
		for p := range 20 {
			order := e2e.ShuffleKeepingFirsts(rng, len(reports), func(i int) string { return fmt.Sprint(reports[i].Day, reports[i].RequestHash) })
			if p == 0 {
				slices.Sort(order)
			}
			var s State
			named := map[board.Day][]string{}
			for _, i := range order {
				r := reports[i]
				res := mustApply(t, &s, r)
				named[r.Day] = append(named[r.Day], res.Day.Region)
			}
			got := make([]DayState, len(s.Days))
			for i, d := range s.Days {
				for _, r := range named[d.Day] {
					if r != "" && r != d.Region && !slices.Contains(d.Left, r) {
						t.Fatalf("trial %d: region %q was written but is neither the day's region nor left: %+v", trial, r, d)
					}
				}
				got[i] = DayState{Day: d.Day, Steps: d.Steps, ReachedMs: d.ReachedMs, Region: d.Region, RegionSteps: d.RegionSteps, RegionReachedMs: d.RegionReachedMs}
			}
			if p == 0 {
				want = got
			} else if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d: order %v gives %+v, the original order %+v", trial, order, got, want)
			}
		}
	}
}

func mustApply(t *testing.T, s *State, r Report) Result {
	t.Helper()
	res, err := s.Apply(r, 0)
	if err != nil {
		t.Fatalf("Apply(%+v): %v", r, err)
	}
	return res
}

func TestRequestMemoryIsBounded(t *testing.T) {
	var s State
	for i := range MaxRequestsPerDay + 10 {
		mustApply(t, &s, Report{uint64(i), 20261130, int64(i), 1, ""})
	}
	if n := len(s.Days[0].Requests); n != MaxRequestsPerDay {
		t.Fatalf("%d request ids kept, want %d", n, MaxRequestsPerDay)
	}
}

func TestStateBinaryRoundTrip(t *testing.T) {
	var s State
	mustApply(t, &s, Report{1, 20261129, 60, 2, "eu-west"})
	mustApply(t, &s, Report{2, 20261130, 70, 3, ""})
	mustApply(t, &s, Report{3, 20261130, 80, 4, "us-east"})
	mustApply(t, &s, Report{4, 20261130, 90, 5, "eu-west"})
	s.MarkHanded(20261130, 1<<63|5)
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

// stateV1 and stateV2 are one state as versions 1 and 2 of the codec wrote it (version 2
// with the region's own steps and reach time and no regions left): one day, 20261129, 60
// steps reached at 2 ms in region "eu", request hash 1; decoded, they are stateOld.
var (
	stateV1  = []byte{stateVersion1, 1, 0x89, 0xd2, 0xd4, 0x09, 120, 4, 2, 'e', 'u', 1, 1, 0, 0, 0, 0, 0, 0, 0}
	stateV2  = []byte{stateVersion2, 1, 0x89, 0xd2, 0xd4, 0x09, 120, 4, 2, 'e', 'u', 120, 4, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0}
	stateOld = State{Days: []DayState{{Day: 20261129, Steps: 60, ReachedMs: 2, Region: "eu", RegionSteps: 60, RegionReachedMs: 2, Requests: []uint64{1}}}}
)

func TestStateDecodesOlderVersions(t *testing.T) {
	for v, b := range map[int][]byte{1: stateV1, 2: stateV2} {
		var s State
		if err := s.UnmarshalBinary(b); err != nil || !reflect.DeepEqual(s, stateOld) {
			t.Fatalf("version %d decodes to %+v (%v), want %+v", v, s, err, stateOld)
		}
		if !s.MarkHanded(20261129, 7) {
			t.Fatalf("a version %d day counts as handed", v)
		}
		if got := persisted(t, &s); !reflect.DeepEqual(*got, s) || s.MarkHanded(20261129, 7) {
			t.Fatalf("re-encoded as version %d: %+v, want %+v", stateVersion, got, s)
		}
		if res, _ := s.Apply(Report{1, 20261129, 900, 1, "us"}, 0); res.Outcome != Duplicate {
			t.Fatalf("a request id of a version %d state is forgotten: %v", v, res.Outcome)
		}
		if res, _ := s.Apply(Report{2, 20261129, 900, 1, "us"}, 0); res.Day.Region != "us" || !slices.Equal(res.Day.Left, []string{"eu"}) {
			t.Fatalf("moving from a version %d region: %+v", v, res.Day)
		}
	}
}

func FuzzStateUnmarshalBinary(f *testing.F) {
	var s State
	s.Apply(Report{1, 20261129, 60, 2, "eu"}, 0)
	s.Apply(Report{2, 20261129, 70, 2, "us"}, 0)
	b, _ := s.MarshalBinary()
	f.Add(b)
	f.Add(stateV1)
	f.Add(stateV2)
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

// TestMarshalBinaryAllocatesTheExactSize: the table keeps each state's encoding as it is made,
// so its room must be its length (varints of every width, regions and regions left included).
func TestMarshalBinaryAllocatesTheExactSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		var s State
		for range 1 + rng.IntN(20) {
			region := []string{"", "eu", "us", "asia-pacific-south"}[rng.IntN(4)]
			steps := rng.Int64N(1 << uint(rng.IntN(63)))
			s.Apply(Report{RequestHash: rng.Uint64(), Day: board.Day(20261120 + rng.IntN(10)), Steps: steps, TSMs: rng.Int64() >> uint(rng.IntN(63)), Region: region}, 0)
		}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != cap(b) {
			t.Fatalf("encoding of %d bytes in a buffer of %d: %+v", len(b), cap(b), s)
		}
	}
}

// FuzzDecodeReusesRoom: decoding into the room of an earlier decode (what the table's codec
// does with its pooled States), after a merge changed it, gives what a fresh decode gives.
func FuzzDecodeReusesRoom(f *testing.F) {
	var s State
	s.Apply(Report{1, 20261129, 60, 2, "eu"}, 0)
	s.Apply(Report{2, 20261129, 70, 2, "us"}, 0)
	s.Apply(Report{3, 20261130, 5, 9, ""}, 0)
	two, _ := s.MarshalBinary()
	one, _ := (&State{Days: s.Days[2:]}).MarshalBinary()
	f.Add(two, one, uint64(4))
	f.Add(one, two, uint64(1))
	f.Add(stateV1, two, uint64(5))
	f.Fuzz(func(t *testing.T, first, second []byte, hash uint64) {
		var fresh State
		errFresh := fresh.UnmarshalBinary(second)
		days, err := decodeDays(first, nil)
		if err == nil {
			reused := State{Days: days}
			reused.Apply(Report{hash, 20261130, int64(hash % 1000), 7, "asia"}, 20261128)
			days = reused.Days
		}
		again, errAgain := decodeDays(second, days[:0])
		if (errFresh == nil) != (errAgain == nil) || errFresh == nil && !reflect.DeepEqual(fresh.Days, again) {
			t.Fatalf("into reused room: %+v (%v), fresh: %+v (%v)", again, errAgain, fresh.Days, errFresh)
		}
	})
}

// TestRegionNameOwnsItsString: a report's region shares the record's memory
// (topics.DecodeStepReport), so the name the state keeps must be a string of its own, for a
// name seen before as for a new one.
func TestRegionNameOwnsItsString(t *testing.T) {
	rec := time.UnixMilli(1796040000000)
	for _, region := range []string{"eu-north", "eu-north", fmt.Sprintf("r-%d", rand.Uint64())} {
		value := []byte(`{"request_id":"r1","user_id":"u1","steps":1,"ts":1796040000000,"tz":"UTC","region":"` + region + `"}`)
		r, _, err := topics.DecodeStepReport("u1", value, rec, topics.DefaultStepRules)
		if err != nil {
			t.Fatal(err)
		}
		name := regionName(r.Region)
		for i := range value {
			value[i] = 'x'
		}
		if name != region {
			t.Fatalf("region %q reads %q once the record's bytes are overwritten", region, name)
		}
	}
}
