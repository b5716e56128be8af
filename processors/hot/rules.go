package hot

import (
	"math"
	"time"
)

// rules are the hot processor's decisions on event time: pure functions of what one loop
// partition knows of the input partitions (a view), the configuration and, for the events
// dated in the future, a wall-clock time passed in. The goka callbacks in processor.go only
// read the state, call these and write.
type rules struct {
	partitions                                 int   // input partitions
	windowMs, slideMs, latenessMs, lookaheadMs int64 // the window's shape
}

func newRules(cfg Config) rules {
	return rules{partitions: cfg.Partitions, windowMs: cfg.Window.Milliseconds(), slideMs: cfg.Slide.Milliseconds(),
		latenessMs: cfg.Lateness.Milliseconds(), lookaheadMs: cfg.Lookahead.Milliseconds()}
}

// view is what a loop partition knows of the input partitions, from their markers, and of its
// own window: how far it was emitted.
type view struct {
	marks map[int32]int64 // input partition → watermark (its newest event time)
	first map[int32]int64 // input partition → its first watermark
	idle  map[int32]bool  // input partitions whose latest word was an idle marker
	live  map[int32]bool  // input partitions whose latest marker said they read at the head of their log
	// endMs is the end of the last window emitted (0: none yet); started the end the window
	// started at (the first marker applied, rounded down to the slide; 0: not yet).
	endMs, started int64
}

func newView() view {
	return view{marks: map[int32]int64{}, first: map[int32]int64{}, idle: map[int32]bool{}, live: map[int32]bool{}}
}

// mark records input partition part's watermark ms: a marker, which also ends its idleness.
func (v view) mark(part int32, ms int64) {
	if _, ok := v.first[part]; !ok {
		v.first[part] = ms
	}
	if old, ok := v.marks[part]; !ok || ms > old {
		v.marks[part] = ms
	}
	delete(v.idle, part)
}

// reads records whether input partition part, in its latest marker, read at the head of its
// log: it had read, at its instance's last reading, everything its log held at the reading
// before (idle.go). A partition behind the windows then is delayed at its source, not a
// backlog on its way (see behind).
func (v view) reads(part int32, live bool) {
	if live {
		v.live[part] = true
	} else {
		delete(v.live, part)
	}
}

// rest records input partition part's idle marker: it had nothing left to read, and every term
// it read is before the marker, so it no longer holds the windows back until its next word.
func (v view) rest(part int32) { v.idle[part] = true }

// low is the smallest watermark over the input partitions that hold the windows back: every
// one but those whose latest word was an idle marker (idleness is decided where the data is,
// by the instance reading the partition: see idle.go) and those behind the windows already
// emitted (behind). held is true while an input partition not heard from yet (neither a
// marker nor an idle marker) holds them back: then nothing closes, however long it takes. low
// is -1 when no input partition holds them back.
func (r rules) low(v view) (low int64, held bool) {
	for part := range int32(r.partitions) {
		if _, ok := v.marks[part]; !ok && !v.idle[part] {
			return -1, true
		}
	}
	floor := r.floor(v)
	low = -1
	for part := range int32(r.partitions) {
		if !r.holds(v, part, floor) {
			continue
		}
		if ms := v.marks[part]; low < 0 || ms < low {
			low = ms
		}
	}
	return low, false
}

// holds tells whether input partition part holds the windows back (low), floor being r.floor(v):
// it was heard from, its latest word is not an idle marker, and it is not behind.
func (r rules) holds(v view, part int32, floor int64) bool {
	ms, ok := v.marks[part]
	return ok && !v.idle[part] && !r.behind(v, part, ms, floor)
}

// unwindowed counts the terms of before (input partition → slide slot → terms, the sketch's
// terms before the first window) that the first window, ending at end, does not hold, of the
// input partitions that hold the windows back: they are dated before the output begins. The
// view is the one the first window closes on.
func (r rules) unwindowed(v view, before map[int32]map[int64]uint64, end int64) uint64 {
	floor, start := r.floor(v), (end-r.windowMs)/r.slideMs
	var n uint64
	for part, slots := range before {
		if !r.holds(v, part, floor) {
			continue
		}
		for slot, terms := range slots {
			if slot < start {
				n += terms
			}
		}
	}
	return n
}

// floor is the end of the last window emitted or, before the first one, of the window before
// it (firstEnd less a slide): the loop partition's windows have passed every event time before
// it. It is defined once every input partition was heard from or is idle.
func (r rules) floor(v view) int64 {
	if v.endMs != 0 {
		return v.endMs
	}
	return r.firstEnd(v, v.started) - r.slideMs
}

// behind tells whether input partition part, at watermark ms, is behind the windows: its newest
// event is more than the lateness before floor, so every query it sent so far is dropped as
// late, and holding the windows back for it would only stop the other partitions (alignment)
// and the output for as long as it stays behind: a lagging mirror, a producer's clock hours
// slow, a backfill into one partition while the others are live. It holds them back again
// once its watermark reaches the lateness before the last window emitted; its queries count
// again from the next window on. A partition included in the windows never falls behind them
// (windows close a lateness behind its watermark): only one that was idle, or behind, is.
//
// Before the first window, a partition behind is left out only when its latest marker said it
// reads at the head of its log (view.reads): a backlog read from the start of a partition
// (an hour of queries before the others' first) holds the first window back until it is read.
func (r rules) behind(v view, part int32, ms, floor int64) bool {
	return ms < floor-r.latenessMs && (v.endMs != 0 || v.live[part])
}

// target is the end of the last window a watermark closes: the lateness behind it, rounded
// down to the slide.
func (r rules) target(low int64) int64 { return (low - r.latenessMs) / r.slideMs * r.slideMs }

// firstEnd is the end of the first window a partition emits: the first slide boundary not
// before any input partition's first watermark (the same on every partition and in every run
// over the same input), and not before the sketch's own start (started, Unix ms): when the
// loop's first records are gone (retention) the window may have started later.
func (r rules) firstEnd(v view, started int64) int64 {
	origin := int64(0)
	for part := range int32(r.partitions) {
		if _, ok := v.marks[part]; ok {
			origin = max(origin, v.first[part])
		}
	}
	return max((origin+r.slideMs-1)/r.slideMs*r.slideMs, started)
}

// closing lists the ends of the windows to emit when the last window emitted ended at last
// and the watermark allows windows up to target. Events in the sketch are all before
// last + slide + lookahead (the ring's reach), so every window ending later than that plus
// the window is empty: those are skipped, and only target's is emitted. A watermark that
// jumps (a gap in the input, a query dated far ahead) therefore costs at most
// (window + lookahead) / slide + 1 windows, whatever the gap. The list depends only on last
// and target, so every partition emits the same windows.
func (r rules) closing(last, target int64) []int64 {
	if target < last+r.slideMs {
		return nil
	}
	reach := last + r.slideMs + r.lookaheadMs + r.windowMs
	var ends []int64
	for end := last + r.slideMs; end <= min(target, reach); end += r.slideMs {
		ends = append(ends, end)
	}
	if target > reach {
		ends = append(ends, target)
	}
	return ends
}

// aheadMs is how far ahead of the closing window end an input partition may route events:
// the lookahead less a fifth of it, the margin that absorbs the loop partitions' lag behind
// one another (markers in flight, a partition read a little later).
func (r rules) aheadMs() int64 { return r.lookaheadMs - r.lookaheadMs/5 }

// admits tells whether an input partition may route an event at ms now (watermark
// alignment), given the view of its own loop partition: yes when it is less than aheadMs
// ahead of the window end the slowest input partition allows (admitBelow). No while an input
// partition not heard from may still hold the windows back. An input partition that runs
// further ahead waits: its events would land beyond the sketch's lookahead and be dropped.
//
// An event dated aheadMs or more after now (wall clock) never waits: no input partition
// catches up with it faster than time passes, so one query dated far ahead would hold its
// partition for as long. It goes on, and the sketch drops it as early (counted) unless the
// windows got within the lookahead of it.
func (r rules) admits(v view, ms int64, now time.Time) bool {
	return ms >= now.UnixMilli()+r.aheadMs() || ms < r.admitBelow(v)
}

// admitBelow is the event time before which admits lets every event through: aheadMs past the
// window end the slowest input partition allows; math.MinInt64 while an input partition not
// heard from holds the windows back, math.MaxInt64 when none holds them back. It depends on
// the view only, so a bound found once holds until the view changes (a marker).
func (r rules) admitBelow(v view) int64 {
	low, held := r.low(v)
	switch {
	case held:
		return math.MinInt64
	case low < 0:
		return math.MaxInt64 // nothing holds the windows back: none closes before an input moves again
	}
	return r.target(low) + r.aheadMs()
}

// fate is what a loop partition does with a term.
type fate uint8

const (
	fateCount     fate = iota // counted in the sketch
	fateDuplicate             // a copy written again by a replay of the input: skipped
	fateLate                  // its window was already emitted: dropped and counted
)

// termFate decides the fate of a term at event time ms and input offset: next is the next
// offset of its input partition not yet counted, whatever the loop records that carried the
// ones before (a replay, or the restart after a crash, flushes other ranges of the input than
// the first run: each term is judged by its own offset), last the end of the last window
// emitted (0: none yet).
func termFate(next, last, ms, offset int64) fate {
	switch {
	case offset < next:
		return fateDuplicate
	case last != 0 && ms < last:
		return fateLate
	}
	return fateCount
}

// catchUp is the range of loop offsets [from, to) a partition's state, which applied every
// record up to applied, must read before the record at next: none when it already covers it
// (the checkpoint, or a read ahead while its input waited, went past it).
func catchUp(applied, next int64) (from, to int64, ok bool) {
	return applied + 1, next, next > applied+1
}
