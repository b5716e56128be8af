package hot

import (
	"slices"
	"testing"
	"time"
)

// testRules: 3 input partitions, a one-minute window, 5 s slide, 2 s lateness, 50 s lookahead
// (so aheadMs is 40 s).
var testRules = rules{partitions: 3, windowMs: 60_000, slideMs: 5000, latenessMs: 2000, lookaheadMs: 50_000}

var t0 = time.Unix(1_800_000_000, 0)

// at builds a view of the input partitions' watermarks (ms), then the idle markers of idle; a
// partition absent from both was never heard from.
func at(marks map[int32]int64, idle ...int32) view {
	v := newView()
	for p, ms := range marks {
		v.mark(p, ms)
	}
	for _, p := range idle {
		v.rest(p)
	}
	return v
}

// TestRulesLow: which input partitions hold the windows back. Nothing depends on the wall
// clock: a partition read behind (its consumer lagging or dead) holds them back however long
// it takes; only its idle marker, sent by the instance reading it once it had no data left for
// the idle time, releases them, until its next word.
func TestRulesLow(t *testing.T) {
	// then applies more words to a view, in order: a watermark marker (ms >= 0) or an idle
	// marker (ms < 0) of input partition part.
	then := func(v view, words ...[2]int64) view {
		for _, w := range words {
			if w[1] < 0 {
				v.rest(int32(w[0]))
			} else {
				v.mark(int32(w[0]), w[1])
			}
		}
		return v
	}
	for _, c := range []struct {
		name string
		v    view
		low  int64
		held bool
	}{
		{"every partition heard: the smallest", at(map[int32]int64{0: 900, 1: 500, 2: 700}), 500, false},
		{"a lagging partition holds the windows, however far behind", at(map[int32]int64{0: 900_000, 1: 500, 2: 700_000}), 500, false},
		{"one never heard from holds the windows", at(map[int32]int64{0: 900, 1: 500}), -1, true},
		{"an idle marker releases them", at(map[int32]int64{0: 900, 1: 500, 2: 700}, 1), 700, false},
		{"data after the idle marker: included again", then(at(map[int32]int64{0: 900, 1: 500, 2: 700}, 1), [2]int64{1, 800}), 700, false},
		{"a marker after the idle marker, not moving: included again", then(at(map[int32]int64{0: 900, 1: 500, 2: 700}, 1), [2]int64{1, 400}), 500, false},
		{"an idle marker after data: released again", then(at(map[int32]int64{0: 900, 1: 500, 2: 700}, 1), [2]int64{1, 800}, [2]int64{1, -1}), 700, false},
		{"never heard from: its idle marker releases them", at(map[int32]int64{0: 900, 1: 500}, 2), 500, false},
		{"never heard from, idle, then data: holds from its first marker", then(at(map[int32]int64{0: 900, 1: 500}, 2), [2]int64{2, 300}), 300, false},
		{"all idle: none holds", at(map[int32]int64{0: 900, 1: 500, 2: 700}, 0, 1, 2), -1, false},
		{"none heard, all idle: none holds", at(nil, 0, 1, 2), -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			low, held := testRules.low(c.v)
			if low != c.low || held != c.held {
				t.Fatalf("low = %d, %v; want %d, %v", low, held, c.low, c.held)
			}
		})
	}
}

func TestRulesTargetAndFirstEnd(t *testing.T) {
	for _, c := range []struct{ low, want int64 }{{12_000, 10_000}, {11_999, 5000}, {7000, 5000}, {6999, 0}} {
		if got := testRules.target(c.low); got != c.want {
			t.Errorf("target(%d) = %d, want %d", c.low, got, c.want)
		}
	}
	v := at(map[int32]int64{0: 61_000, 1: 62_500, 2: 70_000})
	v.first = map[int32]int64{0: 1000, 1: 12_500, 2: 3000, 7: 99_000} // 7 is not an input partition
	for _, c := range []struct{ started, want int64 }{{0, 15_000}, {10_000, 15_000}, {20_000, 20_000}} {
		if got := testRules.firstEnd(v, c.started); got != c.want {
			t.Errorf("firstEnd(started %d) = %d, want %d: the first slide boundary not before every first watermark", c.started, got, c.want)
		}
	}
}

func TestRulesClosing(t *testing.T) {
	for _, c := range []struct {
		name         string
		last, target int64
		want         []int64
	}{
		{"nothing passed", 100_000, 100_000, nil},
		{"a watermark behind", 100_000, 90_000, nil},
		{"one window", 100_000, 105_000, []int64{105_000}},
		{"three windows", 100_000, 115_000, []int64{105_000, 110_000, 115_000}},
		// The sketch holds events before last + slide + lookahead = 155 s, so windows ending
		// after 215 s are empty: only the target's is emitted, whatever the gap.
		{"a gap up to the reach", 100_000, 215_000, steps(105_000, 215_000)},
		{"a gap past the reach", 100_000, 1_000_000_000, append(steps(105_000, 215_000), 1_000_000_000)},
		{"a year-9999 watermark", 100_000, 253_402_300_799_000, append(steps(105_000, 215_000), 253_402_300_799_000)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := testRules.closing(c.last, c.target); !slices.Equal(got, c.want) {
				t.Fatalf("closing(%d, %d) = %v, want %v", c.last, c.target, got, c.want)
			}
		})
	}
}

func steps(from, to int64) []int64 {
	var out []int64
	for e := from; e <= to; e += 5000 {
		out = append(out, e)
	}
	return out
}

func TestRulesAlignment(t *testing.T) {
	// Watermarks 100 s, 130 s, 200 s: the slowest allows windows up to 95 s; an input
	// partition may route events before 95 + 40 = 135 s.
	heard := at(map[int32]int64{0: 100_000, 1: 130_000, 2: 200_000})
	for _, c := range []struct {
		name   string
		v      view
		now    time.Duration
		ms     int64
		admits bool
	}{
		{"behind the slowest", heard, time.Second, 50_000, true},
		{"just inside", heard, time.Second, 134_999, true},
		{"too far ahead: wait", heard, time.Second, 135_000, false},
		{"a partition not heard from yet: wait", at(map[int32]int64{0: 100_000, 2: 200_000}), time.Second, 1, false},
		{"a partition not heard from yet, an hour on: still wait", at(map[int32]int64{0: 100_000, 2: 200_000}), time.Hour, 1, false},
		{"the slowest lags an hour: still wait", heard, time.Hour, 135_000, false},
		{"the slowest went idle: the next one counts", at(map[int32]int64{0: 100_000, 1: 130_000, 2: 200_000}, 0), time.Second, 160_000, true},
		{"all idle: nothing to wait for", at(map[int32]int64{0: 100_000, 1: 130_000, 2: 200_000}, 0, 1, 2), time.Second, 1 << 50, true},
		// t0 is 1.8e12 ms: an event dated 40 s or more after the wall clock never waits.
		{"dated in the future: does not wait", heard, 0, 1_800_000_040_000, true},
		{"dated just before that: waits", heard, 0, 1_800_000_039_999, false},
		{"dated in the future, a partition not heard: does not wait", at(map[int32]int64{0: 100_000}), 0, 1_800_000_040_000, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			now := t0.Add(c.now)
			if got := testRules.admits(c.v, c.ms, now); got != c.admits {
				t.Errorf("admits(%d) = %v, want %v", c.ms, got, c.admits)
			}
			// The bound align keeps while the view does not change holds as time passes.
			if below := testRules.admitBelow(c.v); c.ms < below {
				for _, later := range []time.Duration{time.Second, time.Minute, time.Hour} {
					if !testRules.admits(c.v, c.ms, now.Add(later)) {
						t.Errorf("admitted below %d at %s, not %s later", below, c.now, later)
					}
				}
			}
		})
	}
}

// TestRulesSlowestNeverWaits: whatever the other partitions' watermarks, the input partition
// with the smallest one may route any event up to its own watermark (it never waits on the
// others, so alignment cannot deadlock).
func TestRulesSlowestNeverWaits(t *testing.T) {
	for _, others := range [][2]int64{{0, 0}, {1, 1}, {5000, 3_600_000}, {1 << 40, 1 << 41}} {
		own := int64(1_000_000)
		v := at(map[int32]int64{0: own, 1: own + others[0], 2: own + others[1]})
		for _, ms := range []int64{0, own - 60_000, own - 1, own} {
			if !testRules.admits(v, ms, t0) {
				t.Fatalf("others %v: the slowest partition waits for an event at %d (its watermark %d)", others, ms, own)
			}
		}
	}
}

func TestViewMark(t *testing.T) {
	v := newView()
	v.mark(1, 500)
	v.rest(1)
	v.mark(1, 400) // an older marker (a replayed one, or one after an idle marker) moves nothing but ends the idleness
	if v.idle[1] || v.marks[1] != 500 {
		t.Fatalf("view after an idle marker and an older marker: idle %v, mark %d", v.idle[1], v.marks[1])
	}
	v.mark(1, 600)
	if v.first[1] != 500 || v.marks[1] != 600 {
		t.Fatalf("view after marks: first %d, mark %d", v.first[1], v.marks[1])
	}
	v.mark(2, -5) // a watermark not after 1970 is still heard
	if _, ok := v.marks[2]; !ok {
		t.Fatal("a marker at -5 ms was not recorded")
	}
}

func TestTermFate(t *testing.T) {
	for _, c := range []struct {
		name       string
		next, last int64
		ms, offset int64
		want       fate
	}{
		{"new", 10, 50_000, 60_000, 10, fateCount},
		{"a replayed copy", 10, 50_000, 60_000, 9, fateDuplicate},
		{"a copy, late too: still a copy", 10, 50_000, 1, 3, fateDuplicate},
		{"late: its window was emitted", 0, 50_000, 49_999, 0, fateLate},
		{"at the last window's end: not late", 0, 50_000, 50_000, 0, fateCount},
		{"no window emitted yet: never late", 0, 0, 1, 5, fateCount},
	} {
		if got := termFate(c.next, c.last, c.ms, c.offset); got != c.want {
			t.Errorf("%s: termFate = %d, want %d", c.name, got, c.want)
		}
	}
}

func TestCatchUp(t *testing.T) {
	for _, c := range []struct {
		applied, next, from, to int64
		ok                      bool
	}{
		{-1, 0, 0, 0, false},    // nothing before the first record
		{-1, 5, 0, 5, true},     // no checkpoint: read from the start
		{41, 42, 42, 42, false}, // the checkpoint ends right before it
		{41, 100, 42, 100, true},
		{120, 100, 121, 100, false}, // read ahead while the input waited: goka's record is skipped
	} {
		from, to, ok := catchUp(c.applied, c.next)
		if ok != c.ok || ok && (from != c.from || to != c.to) {
			t.Errorf("catchUp(%d, %d) = [%d, %d) %v, want [%d, %d) %v", c.applied, c.next, from, to, ok, c.from, c.to, c.ok)
		}
	}
}

// TestRulesBehind: an input partition whose watermark is more than the lateness behind the last
// window emitted holds nothing back, however long it keeps sending: the others' live events
// are admitted and the windows go on closing with them. It holds them back again once it gets
// within the lateness of the last window. Before the first window, only a partition that
// reads at the head of its log is left out: a backlog on its way holds the first window back.
func TestRulesBehind(t *testing.T) {
	now := t0.UnixMilli()
	hours := func(h int64) int64 { return now - h*3_600_000 }
	// emitted is a view whose windows were emitted up to now less the lateness and a slide, with
	// watermarks marks and the partitions live read at the head of their logs.
	emitted := func(marks map[int32]int64, live ...int32) view {
		v := at(marks)
		for _, p := range live {
			v.reads(p, true)
		}
		v.endMs, v.started = testRules.target(now), hours(3)
		return v
	}
	for _, c := range []struct {
		name   string
		v      view
		low    int64 // -1: none holds the windows back
		admits int64 // an event time admits lets through at once, now
	}{
		{"one partition two hours behind a window emitted up to now", emitted(map[int32]int64{0: now, 1: now - 1000, 2: hours(2)}), now - 1000, now + 1000},
		{"two partitions behind", emitted(map[int32]int64{0: now, 1: hours(2), 2: hours(1)}), now, now + 1000},
		{"behind, whether it reads at the head of its log or not", emitted(map[int32]int64{0: now, 1: now, 2: hours(2)}, 2), now, now + 1000},
		{"caught up to the lateness before the last window: holds again", emitted(map[int32]int64{0: now, 1: now, 2: testRules.target(now) - 2000}), testRules.target(now) - 2000, now},
		{"just past the lateness: still behind", emitted(map[int32]int64{0: now, 1: now, 2: testRules.target(now) - 2001}), now, now + 1000},
		{"every partition behind or idle: none holds", func() view {
			v := emitted(map[int32]int64{0: hours(2), 1: now, 2: hours(1)})
			v.rest(1)
			return v
		}(), -1, now + 1_000_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			if low, held := testRules.low(c.v); low != c.low || held {
				t.Fatalf("low = %d, %v; want %d, false", low, held, c.low)
			}
			if !testRules.admits(c.v, c.admits, t0) {
				t.Fatalf("an event at now%+d ms waits (admitted below now%+d ms)", c.admits-now, testRules.admitBelow(c.v)-now)
			}
		})
	}
	// Before the first window: the first window ends at the first slide boundary after the
	// newest first watermark (now), so a partition two hours behind is behind it.
	fresh := func(live bool) view {
		v := at(map[int32]int64{0: now, 1: now, 2: hours(2)})
		v.reads(2, live)
		return v
	}
	if low, _ := testRules.low(fresh(false)); low != hours(2) {
		t.Errorf("before the first window, a partition two hours behind with data left to read: low = now%+d ms, want it to hold the windows", low-now)
	}
	if low, _ := testRules.low(fresh(true)); low != now {
		t.Errorf("before the first window, a partition two hours behind at the head of its log: low = now%+d ms, want now", low-now)
	}
	if !testRules.admits(fresh(true), now+1000, t0) || testRules.admits(fresh(false), now+1000, t0) {
		t.Error("before the first window, a live event must wait for a backlog two hours behind, and only for it")
	}
	// The skewed backlog: partition 0 holds an hour before the others' first query, and is being
	// read (not at the head of its log): it holds the first window back.
	skew := at(map[int32]int64{0: hours(3), 1: hours(2), 2: hours(2)})
	if low, _ := testRules.low(skew); low != hours(3) {
		t.Errorf("a backlog an hour before the others' first: low = now%+d ms, want it to hold the windows", low-now)
	}
}

// TestRulesUnwindowed: at the first window's move, the sketch's terms dated before that
// window's start are in no window when their partition holds the windows back (a backlog that
// began before the others), and late drops when it is left out (behind, idle): unwindowed
// counts the first only.
func TestRulesUnwindowed(t *testing.T) {
	now := t0.UnixMilli() / testRules.slideMs * testRules.slideMs
	slot := func(ms int64) int64 { return ms / testRules.slideMs }
	end := now + testRules.slideMs // the first window ends a slide after the newest first watermark
	start := end - testRules.windowMs
	before := map[int32]map[int64]uint64{
		0: {slot(start - 6000): 3, slot(start - 1): 4, slot(start): 100}, // 7 before the window, 100 in it
		1: {slot(now): 50},
		2: {slot(start - 3_600_000): 9}, // an hour before it
	}
	v := at(map[int32]int64{0: now - 70_000, 1: now, 2: now - 3_600_000})
	if n := testRules.unwindowed(v, before, end); n != 7+9 {
		t.Errorf("backlogs that hold the windows back: unwindowed = %d, want 16", n)
	}
	v.reads(2, true) // partition 2 reads at the head of its log: behind, its terms are late
	if n := testRules.unwindowed(v, before, end); n != 7 {
		t.Errorf("partition 2 behind: unwindowed = %d, want 7", n)
	}
	v.rest(0) // idle: left out, late as well
	if n := testRules.unwindowed(v, before, end); n != 0 {
		t.Errorf("partition 0 idle, 2 behind: unwindowed = %d, want 0", n)
	}
}

func TestViewReads(t *testing.T) {
	v := newView()
	v.reads(1, true)
	v.reads(2, false)
	if !v.live[1] || v.live[2] {
		t.Fatalf("live %v", v.live)
	}
	v.reads(1, false)
	if len(v.live) != 0 {
		t.Fatalf("a partition that no longer reads at the head of its log is still live: %v", v.live)
	}
}
