package merge

import (
	"slices"
	"time"

	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/topics"
)

// pending is the merge table's value: what the merge knows of one window (the key is its end).
// The merge decisions below are pure functions of it, a partial and the wall-clock time.
type pending struct {
	WindowStart int64 `json:"window_start_ms"`
	WindowEnd   int64 `json:"window_end_ms"`
	// FirstMs is when (wall clock, Unix ms) the window's first partial arrived here.
	FirstMs int64 `json:"first_ms"`
	// Reported lists the partitions heard from, ascending.
	Reported []int32 `json:"reported"`
	// Items are the reported partials' items merged, the k first (sketch.MergeTopK: the top k
	// of the merged top k and another list is the top k of all), kept until the window is
	// published complete, then dropped (Reported still tells a duplicate). An entry holds one
	// list however many partitions reported, so that each partial decodes and encodes it once.
	Items []topics.PartialItem `json:"items,omitempty"`
	// Dropped sums the reported partials' Dropped.
	Dropped uint64 `json:"dropped,omitempty"`
	// Partials are the reported partials as entries written before Items existed kept them
	// (every one until the window was published complete); upgrade merges them into Items.
	Partials []topics.HotPartial `json:"partials,omitempty"`
	// Published is how many partitions the last published snapshot had (0: none yet), and
	// PublishedMs when (wall clock, Unix ms) it was published.
	Published   int   `json:"published"`
	PublishedMs int64 `json:"published_ms"`
	// Rejected says why the last snapshot due was invalid (no store could ever take it), ""
	// otherwise. A rejected window is not due again until another partition reports; its
	// merged items stay for inspection for rejectedTTL.
	Rejected string `json:"rejected,omitempty"`
}

// upgrade reads a state written before Items existed: its partials are merged into Items,
// keeping every item (snapshot takes the first k); one written before Reported existed (it
// held only partials) also gets its window and partitions from them.
func (st *pending) upgrade() {
	if len(st.Partials) == 0 {
		return
	}
	if len(st.Reported) == 0 {
		st.WindowStart, st.WindowEnd = st.Partials[0].WindowStart, st.Partials[0].WindowEnd
		for _, p := range st.Partials {
			st.Reported = append(st.Reported, p.Partition)
		}
		slices.Sort(st.Reported)
		st.Reported = slices.Compact(st.Reported)
	}
	lists := [][]sketch.Item{topics.SketchItems(st.Items)}
	n := len(st.Items)
	for _, p := range st.Partials {
		lists = append(lists, p.SketchItems())
		n += len(p.Items)
		st.Dropped += p.Dropped
	}
	st.Items = topics.PartialItems(sketch.MergeTopK(n, lists...))
	st.Partials = nil
}

// mergeRules decide what the merge does; fixed for a run.
type mergeRules struct {
	partitions int           // partitions that must report a window
	k          int           // items per snapshot
	wait       time.Duration // how long a window waits for missing partitions
	ttl        time.Duration // how long an entry stays after its last publication
	// started is when this process started: a window's wait starts no earlier, so that
	// partials still queued behind a restart get their chance before the window is
	// published incomplete.
	started time.Time
}

// mergeTTL is how long the merge keeps a published window's entry (wall clock, from its last
// publication): duplicates and late partials within it are recognised. The hot group re-emits
// partials after a crash within its recovery time, well under this.
const mergeTTL = 10 * time.Minute

// rejectedTTL is how long the merge keeps the entry of a window whose snapshot was rejected as
// invalid (wall clock, from the rejection), with its merged items, for inspection.
const rejectedTTL = 24 * time.Hour

// onPartial adds partial p, arrived at now, to st (nil for a window not seen yet). It returns
// the state to keep, whether it changed, and whether it is due for publication (then
// publish snapshot(next, now) and, once stored, call published). A partial of a partition
// already reported (the hot group re-emits partials after a crash) changes nothing, so it
// never republishes a window nor makes an entry again.
func (r mergeRules) onPartial(st *pending, p *topics.HotPartial, now time.Time) (next *pending, changed, due bool) {
	if st == nil {
		st = &pending{WindowStart: p.WindowStart, WindowEnd: p.WindowEnd, FirstMs: now.UnixMilli()}
	}
	i, found := slices.BinarySearch(st.Reported, p.Partition)
	if found {
		return st, false, false
	}
	st.Reported = slices.Insert(st.Reported, i, p.Partition)
	st.Items = topics.PartialItems(sketch.MergeTopK(r.k, topics.SketchItems(st.Items), p.SketchItems()))
	st.Dropped += p.Dropped
	return st, true, r.due(st, now)
}

// onTick is the periodic check of an entry: whether it is due for publication (its wait ran
// out with partitions still missing), or expired (published long enough ago: delete it).
func (r mergeRules) onTick(st *pending, now time.Time) (due, expired bool) {
	if r.due(st, now) {
		return true, false
	}
	ttl := r.ttl
	if st.Rejected != "" {
		ttl = max(ttl, rejectedTTL)
	}
	return false, st.Published == len(st.Reported) && !now.Before(time.UnixMilli(st.PublishedMs).Add(ttl))
}

// due tells whether st has partitions the last publication lacked and is complete or waited
// long enough.
func (r mergeRules) due(st *pending, now time.Time) bool {
	if len(st.Reported) <= st.Published {
		return false
	}
	return r.complete(st) || !now.Before(r.deadline(st))
}

// deadline is when a window still missing partitions is published without them.
func (r mergeRules) deadline(st *pending) time.Time {
	first := time.UnixMilli(st.FirstMs)
	if first.Before(r.started) {
		first = r.started
	}
	return first.Add(r.wait)
}

func (r mergeRules) complete(st *pending) bool { return len(st.Reported) >= r.partitions }

// snapshot is the snapshot of st's merged partials (disjoint lists: exact) to publish at now.
func (r mergeRules) snapshot(st *pending, now time.Time) topics.TopKSnapshot {
	snap := topics.TopKSnapshot{
		Stream:            topics.SearchStream,
		WindowStart:       time.UnixMilli(st.WindowStart).UTC(),
		WindowEnd:         time.UnixMilli(st.WindowEnd).UTC(),
		GeneratedAt:       now.UTC(),
		Version:           st.WindowEnd,
		Items:             []topics.TopKItem{},
		MissingPartitions: r.missing(st),
		Dropped:           st.Dropped,
	}
	for _, it := range st.Items[:min(len(st.Items), r.k)] {
		snap.Items = append(snap.Items, topics.TopKItem(it))
	}
	return snap
}

// missing lists, ascending, the partitions st has not heard from; nil when complete.
func (r mergeRules) missing(st *pending) []int32 {
	var out []int32
	for p := range int32(r.partitions) {
		if _, found := slices.BinarySearch(st.Reported, p); !found {
			out = append(out, p)
		}
	}
	return out
}

// published records that snapshot(st, now) was stored; a complete window drops its item lists.
func (r mergeRules) published(st *pending, now time.Time) {
	st.Published, st.PublishedMs, st.Rejected = len(st.Reported), now.UnixMilli(), ""
	if r.complete(st) {
		st.Items = nil
	}
}

// rejected records that snapshot(st, now) is invalid (reason): the window is not due again
// until another partition reports, and keeps its items.
func (r mergeRules) rejected(st *pending, now time.Time, reason string) {
	st.Published, st.PublishedMs, st.Rejected = len(st.Reported), now.UnixMilli(), reason
}
