package exact

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// op is one call: Add(item, at), or Advance(at) when item is empty.
type op struct {
	item string
	at   time.Time
}

func add(item string, d time.Duration) op { return op{item, t0.Add(d)} }
func adv(d time.Duration) op              { return op{"", t0.Add(d)} }

func (o op) apply(c *Counter) {
	if o.item == "" {
		c.Advance(o.at)
	} else {
		c.Add(o.item, o.at)
	}
}

func mustNew(t testing.TB, window, slide time.Duration, opts ...Option) *Counter {
	t.Helper()
	c, err := New(window, slide, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestExactCounter runs short histories on a 10 s window sliding by 5 s (slots
// [0 s, 5 s), [5 s, 10 s), … from t0) and checks the window, its statistics
// and its Top-K.
func TestExactCounter(t *testing.T) {
	s := time.Second
	year := 365 * 24 * time.Hour
	tests := []struct {
		name       string
		opts       []Option
		ops        []op
		k          int
		want       []Item
		stats      Stats
		start      time.Duration // window's start from t0
		notStarted bool          // Bounds is zero
	}{
		{name: "nothing yet", k: 5, notStarted: true},
		{name: "the first event sets the end and waits ahead of it", ops: []op{add("a", 1*s)},
			k: 5, stats: Stats{Pending: 1}, start: -10 * s},
		{name: "the first watermark sets the end", ops: []op{adv(7 * s), add("a", 6*s), add("b", 4*s)},
			k: 5, want: []Item{{"b", 1}}, stats: Stats{Events: 1, Pending: 1}, start: -5 * s},
		{name: "advance counts what it passes", ops: []op{add("a", 1*s), add("a", 2*s), add("b", 6*s), adv(5 * s)},
			k: 5, want: []Item{{"a", 2}}, stats: Stats{Events: 2, Pending: 1}, start: -5 * s},
		{name: "the window holds two slots", ops: []op{add("a", 1*s), add("b", 6*s), adv(10 * s)},
			k: 5, want: []Item{{"a", 1}, {"b", 1}}, stats: Stats{Events: 2}, start: 0},
		{name: "a slide forgets exactly the slot that leaves", ops: []op{add("a", 1*s), add("b", 6*s), add("a", 7*s), adv(10 * s), adv(14 * s), adv(15 * s)},
			k: 5, want: []Item{{"a", 1}, {"b", 1}}, stats: Stats{Events: 2}, start: 5 * s},
		{name: "everything leaves one slide at a time", ops: []op{add("a", 1*s), add("b", 6*s), adv(10 * s), adv(15 * s), adv(20 * s)},
			k: 5, stats: Stats{}, start: 10 * s},
		{name: "ties by item ascending, k cuts", ops: []op{add("c", 0), add("b", 1*s), add("a", 2*s), add("b", 3*s), add("d", 4*s), add("d", 4*s), adv(5 * s)},
			k: 3, want: []Item{{"b", 2}, {"d", 2}, {"a", 1}}, stats: Stats{Events: 6}, start: -5 * s},
		{name: "k above the items gives them all", ops: []op{add("b", 0), add("a", 0), adv(5 * s)},
			k: 100, want: []Item{{"a", 1}, {"b", 1}}, stats: Stats{Events: 2}, start: -5 * s},
		{name: "k of zero gives nothing", ops: []op{add("a", 0), adv(5 * s)},
			k: 0, stats: Stats{Events: 1}, start: -5 * s},
		{name: "a late event is dropped", ops: []op{adv(20 * s), add("a", 9*s), add("b", 10*s)},
			k: 5, want: []Item{{"b", 1}}, stats: Stats{Events: 1, DroppedLate: 1}, start: 10 * s},
		{name: "a late event goes to the oldest slot", opts: []Option{WithLateOldest()}, ops: []op{adv(20 * s), add("a", -time.Hour), add("b", 16*s)},
			k: 5, want: []Item{{"a", 1}, {"b", 1}}, stats: Stats{Events: 2}, start: 10 * s},
		{name: "and leaves at the next slide", opts: []Option{WithLateOldest()}, ops: []op{adv(20 * s), add("a", -time.Hour), add("b", 16*s), adv(25 * s)},
			k: 5, want: []Item{{"b", 1}}, stats: Stats{Events: 1}, start: 15 * s},
		{name: "without a lookahead every event ahead is kept", ops: []op{adv(0), add("a", 24*time.Hour)},
			k: 5, stats: Stats{Pending: 1}, start: -10 * s},
		{name: "an event past the lookahead is dropped", opts: []Option{WithLookahead(10 * s)}, ops: []op{adv(0), add("a", 9*s), add("b", 10*s)},
			k: 5, stats: Stats{Pending: 1, DroppedEarly: 1}, start: -10 * s},
		{name: "a watermark in the past does nothing", ops: []op{add("a", 1*s), adv(10 * s), adv(0)},
			k: 5, want: []Item{{"a", 1}}, stats: Stats{Events: 1}, start: 0},
		{name: "a jump past everything empties the window", ops: []op{add("a", 1*s), add("b", 6*s), adv(10 * s), add("c", 30*s), adv(time.Hour)},
			k: 5, stats: Stats{}, start: time.Hour - 10*s},
		{name: "a jump into the middle of pending slots", ops: []op{adv(0), add("a", 1*s), add("b", 6*s), add("c", 11*s), add("d", 16*s), add("e", 21*s), adv(20 * s)},
			k: 5, want: []Item{{"c", 1}, {"d", 1}}, stats: Stats{Events: 2, Pending: 1}, start: 10 * s},
		{name: "a jump over pending slots", ops: []op{adv(0), add("a", 1*s), add("b", 26*s), add("c", 41*s), add("d", 51*s), adv(45 * s)},
			k: 5, want: []Item{{"c", 1}}, stats: Stats{Events: 1, Pending: 1}, start: 35 * s},
		{name: "event times past 2106 are dropped as early", ops: []op{adv(0), add("a", 100*year)},
			k: 5, stats: Stats{DroppedEarly: 1}, start: -10 * s},
		{name: "event times before 1834 are late", opts: []Option{WithLateOldest()}, ops: []op{add("a", -200*year), adv(0), add("b", -200*year)},
			k: 5, want: []Item{{"b", 1}}, stats: Stats{Events: 1, DroppedLate: 1}, start: -10 * s},
		{name: "watermarks before 1834 do nothing, after 2106 stop there", ops: []op{adv(-200 * year), add("a", 0), adv(200 * year)},
			k: 5, stats: Stats{}, start: time.Unix(maxSec/5*5, 0).Sub(t0) - 10*s},
		{name: "times before 1970 round down", ops: []op{{"a", time.Unix(0, -1)}, {"", time.Unix(0, 0)}},
			k: 5, want: []Item{{"a", 1}}, stats: Stats{Events: 1}, start: time.Unix(-10, 0).Sub(t0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustNew(t, 10*time.Second, 5*time.Second, tt.opts...)
			for _, o := range tt.ops {
				o.apply(c)
			}
			if got := c.Top(tt.k); !slices.Equal(got, tt.want) {
				t.Errorf("Top(%d) = %v, want %v", tt.k, got, tt.want)
			}
			for _, it := range tt.want {
				if got := c.Count(it.Item); got != it.Count {
					t.Errorf("Count(%q) = %d, want %d", it.Item, got, it.Count)
				}
			}
			if got := c.Stats(); got != tt.stats {
				t.Errorf("Stats() = %+v, want %+v", got, tt.stats)
			}
			start, end := c.Bounds()
			if tt.notStarted {
				if !start.IsZero() || !end.IsZero() {
					t.Errorf("Bounds() = %v, %v before any event", start, end)
				}
				return
			}
			if want := t0.Add(tt.start); !start.Equal(want) || !end.Equal(want.Add(10*time.Second)) {
				t.Errorf("Bounds() = %v, %v; want %v and 10 s later", start, end, want)
			}
		})
	}
}

func TestExactNewRejects(t *testing.T) {
	tests := []struct {
		window, slide time.Duration
		opts          []Option
		want          string
	}{
		{time.Minute, 0, nil, "slide 0s"},
		{time.Minute, -time.Second, nil, "slide -1s"},
		{0, time.Second, nil, "window 0s"},
		{7 * time.Second, 5 * time.Second, nil, "window 7s"},
		{101 * 365 * 24 * time.Hour, time.Hour, nil, "window 884760h0m0s"},
		{time.Minute, 5 * time.Second, []Option{WithLookahead(3 * time.Second)}, "lookahead 3s"},
		{time.Minute, 5 * time.Second, []Option{WithLookahead(0)}, "lookahead 0s"},
	}
	for _, tt := range tests {
		_, err := New(tt.window, tt.slide, tt.opts...)
		if err == nil || !strings.HasPrefix(err.Error(), "exact: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%v, %v): error %v, want one with %q", tt.window, tt.slide, err, tt.want)
		}
	}
}

func TestExactMergeRejectsOtherShapes(t *testing.T) {
	a := mustNew(t, 10*time.Second, 5*time.Second)
	a.Add("x", t0)
	for _, b := range []*Counter{
		mustNew(t, 15*time.Second, 5*time.Second),
		mustNew(t, 10*time.Second, 10*time.Second),
		mustNew(t, 10*time.Second, 5*time.Second, WithLookahead(5*time.Second)),
		mustNew(t, 10*time.Second, 5*time.Second, WithLateOldest()),
	} {
		b.Add("y", t0)
		before := a.Clone()
		if err := a.Merge(b); !errors.Is(err, ErrShapeMismatch) {
			t.Errorf("Merge: %v, want ErrShapeMismatch", err)
		}
		if !same(a, before) {
			t.Errorf("a failed Merge changed the counter")
		}
	}
}

// same tells whether two counters hold the same state.
func same(a, b *Counter) bool {
	if a.shape != b.shape || a.started != b.started || a.end != b.end || a.stats != b.stats || len(a.bySlot) != len(b.bySlot) || len(a.counts) != len(b.counts) {
		return false
	}
	for it, n := range a.counts {
		if b.counts[it] != n {
			return false
		}
	}
	for s, m := range a.bySlot {
		if len(b.bySlot[s]) != len(m) {
			return false
		}
		for it, n := range m {
			if b.bySlot[s][it] != n {
				return false
			}
		}
	}
	return true
}

// model is the definition the counter must meet, written the plain way: it
// keeps every event it accepted with its slot, and counts by scanning them.
type model struct {
	slide, slots, lookahead int64
	lateOldest              bool
	started                 bool
	end                     int64
	events                  []modelEvent
	late, early             uint64
}

type modelEvent struct {
	item string
	slot int64
}

func (m *model) slotOf(t time.Time) int64 {
	ns := t.UnixNano()
	s := ns / m.slide
	if ns%m.slide != 0 && ns < 0 {
		s--
	}
	return s
}

func (m *model) add(item string, t time.Time) {
	s := m.slotOf(t)
	if !m.started {
		m.started, m.end = true, s
	}
	switch {
	case s < m.end-m.slots && m.lateOldest:
		s = m.end - m.slots
	case s < m.end-m.slots:
		m.late++
		return
	case m.lookahead > 0 && s >= m.end+m.lookahead:
		m.early++
		return
	}
	m.events = append(m.events, modelEvent{item, s})
}

func (m *model) advance(t time.Time) {
	s := m.slotOf(t)
	if !m.started {
		m.started, m.end = true, s
	}
	m.end = max(m.end, s)
}

// merge is the union of the events at the later end.
func (m *model) merge(o *model) {
	if o.started && (!m.started || o.end > m.end) {
		m.started, m.end = true, o.end
	}
	m.events = append(m.events, o.events...)
	m.late += o.late
	m.early += o.early
}

func (m *model) counts() map[string]uint64 {
	c := map[string]uint64{}
	for _, e := range m.events {
		if e.slot >= m.end-m.slots && e.slot < m.end {
			c[e.item]++
		}
	}
	return c
}

func (m *model) stats() Stats {
	s := Stats{DroppedLate: m.late, DroppedEarly: m.early}
	for _, e := range m.events {
		switch {
		case e.slot >= m.end:
			s.Pending++
		case e.slot >= m.end-m.slots:
			s.Events++
		}
	}
	return s
}

// top sorts every count by count descending, then item ascending.
func (m *model) top(k int) []Item {
	var all []Item
	for it, n := range m.counts() {
		all = append(all, Item{it, n})
	}
	slices.SortFunc(all, func(a, b Item) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Item, b.Item)
	})
	if k <= 0 {
		return nil
	}
	return all[:min(k, len(all))]
}

// check compares the counter with the model: statistics, bounds, every
// item's count and Top-K for every k up to past the number of items.
func check(t *testing.T, c *Counter, m *model, items []string) {
	t.Helper()
	if got, want := c.Stats(), m.stats(); got != want {
		t.Fatalf("Stats() = %+v, want %+v", got, want)
	}
	if start, end := c.Bounds(); m.started && (start.UnixNano() != (m.end-m.slots)*m.slide || end.UnixNano() != m.end*m.slide) {
		t.Fatalf("Bounds() = %v, %v; want the slots %d to %d", start, end, m.end-m.slots, m.end)
	}
	counts := m.counts()
	for _, it := range items {
		if got := c.Count(it); got != counts[it] {
			t.Fatalf("Count(%q) = %d, want %d", it, got, counts[it])
		}
	}
	for k := range len(counts) + 2 {
		if got, want := c.Top(k), m.top(k); !slices.Equal(got, want) {
			t.Fatalf("Top(%d) = %v, want %v", k, got, want)
		}
	}
}

// history draws random operations around a moving watermark: events near
// it, some late or far ahead, small slides, jumps and watermarks in the past.
type history struct {
	rng         *rand.Rand
	items       []string
	now         time.Time
	slide, span time.Duration // span: window + lookahead
}

func (h *history) step(c *Counter, m *model) {
	switch r := h.rng.IntN(100); {
	case r < 75:
		at := h.now.Add(time.Duration(h.rng.Int64N(int64(3*h.slide))) - h.slide)
		switch h.rng.IntN(20) {
		case 0:
			at = at.Add(-h.span - time.Duration(h.rng.Int64N(int64(h.span))))
		case 1:
			at = at.Add(time.Duration(h.rng.Int64N(int64(2 * h.span))))
		}
		// Skewed items, so that Top-K has ties and clear leaders.
		it := h.items[h.rng.IntN(1+h.rng.IntN(len(h.items)))]
		c.Add(it, at)
		m.add(it, at)
	case r < 95:
		h.now = h.now.Add(time.Duration(h.rng.Int64N(int64(2 * h.slide))))
		c.Advance(h.now)
		m.advance(h.now)
	case r < 98:
		h.now = h.now.Add(h.span + time.Duration(h.rng.Int64N(int64(2*h.span))))
		c.Advance(h.now)
		m.advance(h.now)
	default:
		c.Advance(h.now.Add(-h.span))
		m.advance(h.now.Add(-h.span))
	}
}

// TestExactMatchesModel is the property test: over random shapes and random
// histories, after every operation the counter agrees with the model; a
// clone goes on independently, and a merge of two counters fed different
// histories agrees with the union of their models, then goes on like any
// other counter.
func TestExactMatchesModel(t *testing.T) {
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 42))
		slide := time.Duration(1+rng.IntN(4)) * time.Second
		slots := int64(1 + rng.IntN(8))
		m := model{slide: int64(slide), slots: slots, lateOldest: rng.IntN(2) == 0}
		opts := []Option{}
		if m.lateOldest {
			opts = append(opts, WithLateOldest())
		}
		if rng.IntN(2) == 0 {
			m.lookahead = int64(1 + rng.IntN(4))
			opts = append(opts, WithLookahead(time.Duration(m.lookahead)*slide))
		}
		span := time.Duration(slots+max(m.lookahead, 2)) * slide
		var items []string
		for i := range 2 + rng.IntN(20) {
			items = append(items, fmt.Sprintf("item-%d", i))
		}
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			newPair := func() (*Counter, *model) {
				mm := m
				return mustNew(t, time.Duration(slots)*slide, slide, opts...), &mm
			}
			h := &history{rng: rng, items: items, now: t0.Add(time.Duration(rng.Int64N(int64(time.Hour)))), slide: slide, span: span}
			a, am := newPair()
			b, bm := newPair()
			for range 150 {
				h.step(a, am)
				check(t, a, am, items)
			}
			// A clone keeps the state it was cloned with.
			frozen, fm := a.Clone(), *am
			fm.events = slices.Clone(am.events)
			for range 150 {
				h.step(b, bm)
				check(t, b, bm, items)
				h.step(a, am)
			}
			check(t, frozen, &fm, items)
			check(t, a, am, items)
			// Merge, in both directions, then go on.
			ab, abm := a.Clone(), *am
			abm.events = slices.Clone(am.events)
			if err := ab.Merge(b); err != nil {
				t.Fatal(err)
			}
			abm.merge(bm)
			check(t, ab, &abm, items)
			check(t, b, bm, items) // unchanged
			ba := b.Clone()
			if err := ba.Merge(a); err != nil {
				t.Fatal(err)
			}
			if !same(ab, ba) {
				t.Fatalf("a.Merge(b) and b.Merge(a) differ")
			}
			// An empty counter adds nothing, and takes all.
			empty, _ := newPair()
			if err := ba.Merge(empty); err != nil || !same(ab, ba) {
				t.Fatalf("merging an empty counter: %v, or it changed the state", err)
			}
			if err := empty.Merge(ab); err != nil || !same(empty, ab) {
				t.Fatalf("merging into an empty counter: %v, or it is not a copy", err)
			}
			for range 100 {
				h.step(ab, &abm)
				check(t, ab, &abm, items)
			}
		})
	}
}
