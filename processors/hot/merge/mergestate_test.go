package merge

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/topics"
)

var mergeT0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const testWindowEnd = 1796040000000 // the window of these tests ends at mergeT0

// testPartial is partition p's partial of the test window: one item of its own, "p<N>", whose
// count is 10 × (N + 1).
func testPartial(p int32) *topics.HotPartial {
	return &topics.HotPartial{Partition: p, WindowStart: testWindowEnd - 3_600_000, WindowEnd: testWindowEnd,
		Items: []topics.PartialItem{{Item: fmt.Sprint("p", p), Count: uint64(10 * (p + 1))}}}
}

// mergeStep is something that happens to one window's entry at mergeT0 + at: a partial of
// partition `partial`, or a sweep when partial < 0. want is what the merge does: "" nothing
// visible, "publish M I" a snapshot missing partitions M with items I, "delete".
type mergeStep struct {
	at      time.Duration
	partial int32
	want    string
}

const sweepStep = -1

// runMerge drives the pure merge decisions as the goka callbacks do (merge for a partial,
// sweep for a tick), publishing always succeeding, and checks each step's outcome.
func runMerge(t *testing.T, r mergeRules, steps []mergeStep) {
	t.Helper()
	var st *pending
	for i, s := range steps {
		now := mergeT0.Add(s.at)
		var due, expired bool
		if s.partial >= 0 {
			st, _, due = r.onPartial(st, testPartial(s.partial), now)
		} else if st != nil {
			due, expired = r.onTick(st, now)
		}
		got := ""
		switch {
		case expired:
			got, st = "delete", nil
		case due:
			snap := r.snapshot(st, now)
			var items []string
			for _, it := range snap.Items {
				items = append(items, fmt.Sprintf("%s=%d", it.Item, it.Count))
			}
			got = fmt.Sprintf("publish %v %s", snap.MissingPartitions, strings.Join(items, ","))
			if snap.Version != testWindowEnd || !snap.GeneratedAt.Equal(now) || snap.WindowEnd.UnixMilli() != testWindowEnd {
				t.Errorf("step %d: snapshot version %d, generated %s, window end %s", i, snap.Version, snap.GeneratedAt, snap.WindowEnd)
			}
			r.published(st, now)
		}
		if got != s.want {
			t.Fatalf("step %d (%+v): got %q, want %q", i, s, got, s.want)
		}
	}
}

func TestMergeDecisions(t *testing.T) {
	const wait = 10 * time.Second
	r := mergeRules{partitions: 3, k: 2, wait: wait, ttl: mergeTTL, started: mergeT0.Add(-time.Hour)}
	s := time.Second
	for _, tt := range []struct {
		name  string
		rules mergeRules
		steps []mergeStep
	}{
		{"every partition reports: one complete snapshot, its Top-K", r, []mergeStep{
			{0, 2, ""}, {s, 0, ""}, {2 * s, 1, "publish [] p2=30,p1=20"},
		}},
		{"duplicates of a complete window publish nothing, and the entry expires", r, []mergeStep{
			{0, 0, ""}, {0, 1, ""}, {0, 2, "publish [] p2=30,p1=20"},
			{s, 1, ""}, {2 * s, sweepStep, ""}, {wait, 2, ""}, {mergeTTL - s, sweepStep, ""},
			{mergeTTL, sweepStep, "delete"},
		}},
		{"a partition never reports: published without it when the wait runs out", r, []mergeStep{
			{0, 0, ""}, {5 * s, 1, ""}, {wait - time.Millisecond, sweepStep, ""},
			{wait, sweepStep, "publish [2] p1=20,p0=10"}, {wait + s, sweepStep, ""},
		}},
		{"a late partial republishes complete; duplicates then publish nothing", r, []mergeStep{
			{0, 0, ""}, {s, 1, ""}, {wait + s, sweepStep, "publish [2] p1=20,p0=10"},
			{wait + 2*s, 0, ""}, {wait + 3*s, sweepStep, ""},
			{20 * s, 2, "publish [] p2=30,p1=20"}, {21 * s, 2, ""}, {22 * s, 0, ""}, {23 * s, sweepStep, ""},
			{20*s + mergeTTL, sweepStep, "delete"},
		}},
		{"a partial after the wait, before the sweep, publishes at once", r, []mergeStep{
			{0, 1, ""}, {wait + s, 0, "publish [2] p1=20,p0=10"}, {wait + 2*s, sweepStep, ""},
		}},
		{"two missing, then one arrives late, then the other", r, []mergeStep{
			{0, 0, ""}, {wait, sweepStep, "publish [1 2] p0=10"},
			{wait + s, 2, "publish [1] p2=30,p0=10"}, {wait + 2*s, 1, "publish [] p2=30,p1=20"},
		}},
		{"an incomplete window's entry expires too", r, []mergeStep{
			{0, 0, ""}, {wait, sweepStep, "publish [1 2] p0=10"}, {wait + mergeTTL, sweepStep, "delete"},
		}},
		{"after expiry a partial starts a new entry, which waits again", r, []mergeStep{
			{0, 0, ""}, {0, 1, ""}, {0, 2, "publish [] p2=30,p1=20"}, {mergeTTL, sweepStep, "delete"},
			{mergeTTL + s, 1, ""}, {mergeTTL + s + wait, sweepStep, "publish [0 2] p1=20"},
		}},
		{"one partition: published at once", mergeRules{partitions: 1, k: 5, wait: wait, ttl: mergeTTL}, []mergeStep{
			{0, 0, "publish [] p0=10"}, {0, 0, ""},
		}},
		{"after a restart the wait starts at the restart", mergeRules{partitions: 3, k: 2, wait: wait, ttl: mergeTTL, started: mergeT0.Add(time.Minute)},
			[]mergeStep{
				{0, 0, ""}, {time.Minute, sweepStep, ""}, {time.Minute + wait - s, sweepStep, ""},
				{time.Minute + wait, sweepStep, "publish [1 2] p0=10"},
			}},
	} {
		t.Run(tt.name, func(t *testing.T) { runMerge(t, tt.rules, tt.steps) })
	}
}

// TestMergeStateKeepsNoItemsOnceComplete: a complete window's entry keeps the partitions
// heard from, not their lists.
func TestMergeStateKeepsNoItemsOnceComplete(t *testing.T) {
	r := mergeRules{partitions: 2, k: 10, wait: time.Second, ttl: mergeTTL}
	st, _, _ := r.onPartial(nil, testPartial(1), mergeT0)
	st, changed, due := r.onPartial(st, testPartial(0), mergeT0)
	if !changed || !due {
		t.Fatalf("second partition: changed %v, due %v", changed, due)
	}
	r.published(st, mergeT0)
	b, err := pendingCodec{}.Encode(st)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"window_start_ms":1796036400000,"window_end_ms":1796040000000,"first_ms":1796040000000,"reported":[0,1],"published":2,"published_ms":1796040000000}`
	if string(b) != want {
		t.Fatalf("stored %s\nwant   %s", b, want)
	}
}

// TestMergeStateReadsTheOldFormat: an entry written before the merge kept more than its
// partials is read as a window not published yet, waiting from the start of this process.
func TestMergeStateReadsTheOldFormat(t *testing.T) {
	old := `{"partials":[{"partition":3,"window_start_ms":1796036400000,"window_end_ms":1796040000000,"items":[{"item":"p3","count":40,"error":0}]},` +
		`{"partition":1,"window_start_ms":1796036400000,"window_end_ms":1796040000000,"items":[{"item":"p1","count":20,"error":0}]}]}`
	v, err := pendingCodec{}.Decode([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	st := v.(*pending)
	if !slices.Equal(st.Reported, []int32{1, 3}) || st.WindowEnd != testWindowEnd || st.WindowStart != testWindowEnd-3_600_000 || st.Published != 0 {
		t.Fatalf("decoded %+v", st)
	}
	r := mergeRules{partitions: 4, k: 10, wait: time.Second, ttl: mergeTTL, started: mergeT0}
	if due, _ := r.onTick(st, mergeT0.Add(999*time.Millisecond)); due {
		t.Fatal("due before the wait from the start")
	}
	if due, _ := r.onTick(st, mergeT0.Add(time.Second)); !due || fmt.Sprint(r.snapshot(st, mergeT0).MissingPartitions) != "[0 2]" {
		t.Fatalf("after the wait: due %v, snapshot %+v", due, r.snapshot(st, mergeT0))
	}
}

func TestSweepEvery(t *testing.T) {
	for wait, want := range map[time.Duration]time.Duration{
		10 * time.Second: time.Second, 2 * time.Second: 500 * time.Millisecond, 100 * time.Millisecond: 100 * time.Millisecond,
	} {
		if got := sweepEvery(wait); got != want {
			t.Errorf("sweepEvery(%s) = %s, want %s", wait, got, want)
		}
	}
}

// TestMergeRejectedWindow: a window whose snapshot was rejected as invalid is not due again
// (no retry), keeps its items, is due again when another partition reports, and its entry
// expires after rejectedTTL instead of mergeTTL.
func TestMergeRejectedWindow(t *testing.T) {
	r := mergeRules{partitions: 3, k: 10, wait: time.Second, ttl: mergeTTL, started: mergeT0.Add(-time.Hour)}
	st, _, _ := r.onPartial(nil, testPartial(0), mergeT0)
	st, _, _ = r.onPartial(st, testPartial(1), mergeT0)
	if due, _ := r.onTick(st, mergeT0.Add(time.Second)); !due {
		t.Fatal("window missing a partition not due after the wait")
	}
	r.rejected(st, mergeT0.Add(time.Second), "invalid snapshot: test")
	for _, at := range []time.Duration{time.Second, time.Minute, mergeTTL + time.Minute} {
		if due, expired := r.onTick(st, mergeT0.Add(at)); due || expired {
			t.Fatalf("rejected window at +%s: due %v, expired %v; want neither", at, due, expired)
		}
	}
	if len(st.Items) != 2 {
		t.Fatalf("rejected window keeps %d items, want its partials' 2", len(st.Items))
	}
	if _, expired := r.onTick(st, mergeT0.Add(time.Second+rejectedTTL)); !expired {
		t.Fatal("rejected window not expired after rejectedTTL")
	}
	st, changed, due := r.onPartial(st, testPartial(2), mergeT0.Add(2*time.Second))
	if !changed || !due {
		t.Fatalf("the last partition of a rejected window: changed %v, due %v; want both", changed, due)
	}
	r.published(st, mergeT0.Add(2*time.Second))
	if st.Rejected != "" || st.Items != nil {
		t.Fatalf("published after a rejection: rejected %q, %d items", st.Rejected, len(st.Items))
	}
}

// TestMergeSumsDropped: a snapshot reports the events its partitions dropped, summed over
// the partials it merges (incomplete, then complete).
func TestMergeSumsDropped(t *testing.T) {
	r := mergeRules{partitions: 3, k: 2, wait: time.Second, ttl: mergeTTL, started: mergeT0.Add(-time.Hour)}
	var st *pending
	for i, c := range []struct {
		partition int32
		dropped   uint64
		want      uint64
	}{{0, 3, 3}, {2, 0, 3}, {1, 40, 43}} {
		p := testPartial(c.partition)
		p.Dropped = c.dropped
		st, _, _ = r.onPartial(st, p, mergeT0.Add(time.Duration(i)*time.Second))
		if got := r.snapshot(st, mergeT0).Dropped; got != c.want {
			t.Fatalf("after partition %d: dropped %d, want %d", c.partition, got, c.want)
		}
	}
}

// TestMergeStateReadsThePartialsFormat: an entry written while the merge kept every partial
// until the window was complete is read with their items merged and their drops summed.
func TestMergeStateReadsThePartialsFormat(t *testing.T) {
	old := `{"window_start_ms":1796036400000,"window_end_ms":1796040000000,"first_ms":1796040000000,"reported":[1,3],` +
		`"partials":[{"partition":3,"window_start_ms":1796036400000,"window_end_ms":1796040000000,"items":[{"Item":"p3","Count":40,"Error":0},{"Item":"x","Count":5,"Error":2}],"dropped":4},` +
		`{"partition":1,"window_start_ms":1796036400000,"window_end_ms":1796040000000,"items":[{"Item":"p1","Count":20,"Error":1}],"dropped":3}],"published":0,"published_ms":0}`
	v, err := pendingCodec{}.Decode([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	st := v.(*pending)
	want := []topics.PartialItem{{Item: "p3", Count: 40}, {Item: "p1", Count: 20, Error: 1}, {Item: "x", Count: 5, Error: 2}}
	if !slices.Equal(st.Reported, []int32{1, 3}) || !slices.Equal(st.Items, want) || st.Dropped != 7 || st.Partials != nil {
		t.Fatalf("decoded %+v", st)
	}
	r := mergeRules{partitions: 4, k: 2, wait: time.Second, ttl: mergeTTL, started: mergeT0}
	if snap := r.snapshot(st, mergeT0); fmt.Sprint(snap.Items) != "[{p3 40 0} {p1 20 1}]" || snap.Dropped != 7 {
		t.Fatalf("snapshot %+v", snap)
	}
}

// TestMergeOneListIsMergeTopKOfAll: the entry's one merged list gives, after each partial in
// any order, the snapshot sketch.MergeTopK gives from all the partials reported so far, with
// ties, and items found in several partials (which disjoint partitions never send).
func TestMergeOneListIsMergeTopKOfAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for round := range 300 {
		parts, k := 1+rng.IntN(6), 1+rng.IntN(8)
		r := mergeRules{partitions: parts, k: k, wait: time.Hour, ttl: mergeTTL, started: mergeT0}
		var st *pending
		var lists [][]sketch.Item
		var dropped uint64
		for _, p := range rng.Perm(parts) {
			part := testPartial(int32(p))
			part.Items, part.Dropped = nil, uint64(rng.IntN(3))
			for range rng.IntN(2 * k) {
				part.Items = append(part.Items, topics.PartialItem{Item: fmt.Sprint("t", rng.IntN(10)), Count: uint64(1 + rng.IntN(5)), Error: uint64(rng.IntN(2))})
			}
			st, _, _ = r.onPartial(st, part, mergeT0)
			lists = append(lists, part.SketchItems())
			dropped += part.Dropped
			snap := r.snapshot(st, mergeT0)
			var got []sketch.Item
			for _, it := range snap.Items {
				got = append(got, sketch.Item{Item: it.Item, Count: it.Count, Error: it.Error})
			}
			if want := sketch.MergeTopK(k, lists...); !slices.Equal(got, want) || snap.Dropped != dropped {
				t.Fatalf("round %d, after %d partials: items %v, dropped %d; want %v, %d", round, len(lists), got, snap.Dropped, want, dropped)
			}
		}
	}
}
