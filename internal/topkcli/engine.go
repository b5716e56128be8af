package topkcli

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/topics"
)

// engine counts items over the sliding window: the sketch, or exact counts.
// Both follow the sketch's rules: advance moves the window's end to the
// watermark rounded down to the slide; events at or after the end wait for
// the windows to come.
type engine interface {
	add(item string, t time.Time)
	advance(watermark time.Time)
	top(dst []sketch.Item) []sketch.Item
	bounds() (start, end time.Time)
	// empty reports that no event is in the window or ahead of it.
	empty() bool
}

func newEngine(cfg config) (engine, error) {
	if cfg.exact {
		// The sketch validates the window and slide; k is unbounded here.
		if _, err := sketch.New(sketch.WithWindow(cfg.window), sketch.WithSlide(cfg.slide)); err != nil {
			return nil, err
		}
		if cfg.k < 1 {
			return nil, fmt.Errorf("k %d: want at least 1", cfg.k)
		}
		return &exact{
			slide: int64(cfg.slide), slots: int64(cfg.window / cfg.slide), k: cfg.k,
			bySlot: map[int64]map[string]uint64{}, counts: map[string]uint64{},
		}, nil
	}
	w, err := sketch.New(
		sketch.WithWindow(cfg.window),
		sketch.WithSlide(cfg.slide),
		sketch.WithK(cfg.k),
		sketch.WithWidth(cfg.width),
		sketch.WithDepth(cfg.depth),
		sketch.WithCandidates(cfg.candidates),
	)
	if err != nil {
		return nil, err
	}
	return &approx{w: w}, nil
}

// approx is the pipeline's engine.
type approx struct{ w *sketch.Window }

func (a *approx) add(item string, t time.Time)        { a.w.Add(item, t) }
func (a *approx) advance(t time.Time)                 { a.w.Advance(t) }
func (a *approx) top(dst []sketch.Item) []sketch.Item { return a.w.AppendTopK(dst) }
func (a *approx) bounds() (time.Time, time.Time)      { return a.w.Bounds() }
func (a *approx) empty() bool                         { s := a.w.Stats(); return s.Events+s.Pending == 0 }

// exact keeps every item's count per slot: memory grows with the distinct
// items, and the counts are exact.
type exact struct {
	slide, slots int64 // slide in nanoseconds, slots per window
	k            int
	started      bool
	end          int64                       // slot where the window ends
	bySlot       map[int64]map[string]uint64 // slots in the window or ahead
	counts       map[string]uint64           // the window's counts
}

func (e *exact) slotOf(t time.Time) int64 { return floorDiv(t.UnixNano(), e.slide) }

func (e *exact) add(item string, t time.Time) {
	s := e.slotOf(t)
	if !e.started {
		e.started, e.end = true, s
	}
	if s < e.end-e.slots {
		return // late; the runner never sends such events
	}
	m := e.bySlot[s]
	if m == nil {
		m = map[string]uint64{}
		e.bySlot[s] = m
	}
	m[item]++
	if s < e.end {
		e.counts[item]++
	}
}

func (e *exact) advance(t time.Time) {
	target := e.slotOf(t)
	if !e.started {
		e.started, e.end = true, target
		return
	}
	for ; e.end < target; e.end++ {
		if len(e.bySlot) == 0 {
			e.end = target
			return
		}
		for it, c := range e.bySlot[e.end] {
			e.counts[it] += c
		}
		old := e.end - e.slots
		for it, c := range e.bySlot[old] {
			if e.counts[it] -= c; e.counts[it] == 0 {
				delete(e.counts, it)
			}
		}
		delete(e.bySlot, old)
	}
}

func (e *exact) top(dst []sketch.Item) []sketch.Item {
	n0 := len(dst)
	for it, c := range e.counts {
		dst = append(dst, sketch.Item{Item: it, Count: c})
	}
	slices.SortFunc(dst[n0:], func(a, b sketch.Item) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Item, b.Item)
	})
	return dst[:min(len(dst), n0+e.k)]
}

func (e *exact) bounds() (time.Time, time.Time) {
	return time.Unix(0, (e.end-e.slots)*e.slide).UTC(), time.Unix(0, e.end*e.slide).UTC()
}

func (e *exact) empty() bool { return len(e.bySlot) == 0 }

// parseLine splits "<time>\t<item>" and normalises the item.
func parseLine(s string) (time.Time, string, error) {
	ts, raw, ok := strings.Cut(s, "\t")
	if !ok {
		return time.Time{}, "", fmt.Errorf("no tab between time and item")
	}
	t, err := parseTime(ts)
	if err != nil {
		return time.Time{}, "", err
	}
	item := topics.Normalize(raw)
	if item == "" {
		return time.Time{}, "", fmt.Errorf("empty item")
	}
	return t, item, nil
}

// parseTime reads RFC 3339 with an offset or integer epoch milliseconds, as
// the event contract allows, within the years 1970 to 2200.
func parseTime(s string) (time.Time, error) {
	t, err := topics.ParseTime(s)
	if err != nil {
		return time.Time{}, err
	}
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, fmt.Errorf("time %q outside %d to %d", s, minTime.Year(), maxTime.Year())
	}
	return t, nil
}

var (
	minTime = time.Unix(0, 0)
	maxTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}
