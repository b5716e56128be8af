package sketch

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// exact is the oracle of the property tests: exact per-slot counts with the
// same rules as Window for the window's end, the lookahead, late and early
// events.
type exact struct {
	cfg     config
	started bool
	end     int64 // slot
	slots   map[int64]map[string]uint64
	late    uint64 // dropped
	early   uint64
}

func newExact(cfg config) *exact { return &exact{cfg: cfg, slots: map[int64]map[string]uint64{}} }

// clone returns a deep copy.
func (o *exact) clone() *exact {
	c := *o
	c.slots = map[int64]map[string]uint64{}
	for s, m := range o.slots {
		c.slots[s] = map[string]uint64{}
		for it, n := range m {
			c.slots[s][it] = n
		}
	}
	return &c
}

func (o *exact) slotOf(t time.Time) int64 { return floorDiv(t.UnixNano(), int64(o.cfg.slide)) }

func (o *exact) add(item string, t time.Time) {
	s := o.slotOf(t)
	if !o.started {
		o.started, o.end = true, s
	}
	n := int64(o.cfg.slots())
	switch {
	case s < o.end-n && o.cfg.late == LateDrop:
		o.late++
		return
	case s < o.end-n:
		s = o.end - n
	case s >= o.end+int64(o.cfg.ringSlots())-n:
		o.early++
		return
	}
	if o.slots[s] == nil {
		o.slots[s] = map[string]uint64{}
	}
	o.slots[s][item]++
}

func (o *exact) advance(t time.Time) {
	s := o.slotOf(t)
	if !o.started {
		o.started, o.end = true, s
		return
	}
	if s > o.end {
		o.end = s
	}
	for k := range o.slots {
		if k < o.end-int64(o.cfg.slots()) {
			delete(o.slots, k)
		}
	}
}

// count is the exact count of item in the window [end − N, end).
func (o *exact) count(item string) uint64 {
	var n uint64
	for s, m := range o.slots {
		if s < o.end {
			n += m[item]
		}
	}
	return n
}

// totals returns the events in the window and ahead of it.
func (o *exact) totals() (in, ahead uint64) {
	for s, m := range o.slots {
		for _, c := range m {
			if s < o.end {
				in += c
			} else {
				ahead += c
			}
		}
	}
	return in, ahead
}

// randomConfig draws a small shape that exercises every boundary: few
// slots, blocks of one or more slots, tiny or collision-free sketches.
func randomConfig(rng *rand.Rand) config {
	slide := time.Duration(1+rng.IntN(5)) * time.Second
	slots := 1 + rng.IntN(12)
	k := 1 + rng.IntN(5)
	return config{
		width:      []int{16, 32, 256, 1024}[rng.IntN(4)],
		depth:      1 + rng.IntN(4),
		k:          k,
		candidates: k + rng.IntN(8),
		window:     time.Duration(slots) * slide,
		slide:      slide,
		lookahead:  time.Duration(1+rng.IntN(3)) * slide,
		blocks:     1 + rng.IntN(slots),
		late:       LatePolicy(rng.IntN(2)),
	}
}

// stream is a random sequence of operations on a window and its oracle.
type stream struct {
	pcg   *rand.PCG
	rng   *rand.Rand
	items []string
	now   time.Time
}

func newStream(seed uint64, distinct int) *stream {
	pcg := rand.NewPCG(seed, 7)
	st := &stream{pcg: pcg, rng: rand.New(pcg), now: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	for i := range distinct {
		st.items = append(st.items, fmt.Sprintf("item-%d", i))
	}
	return st
}

// clone returns a stream that will make the same operations.
func (st *stream) clone() *stream {
	pcg := *st.pcg
	return &stream{pcg: &pcg, rng: rand.New(&pcg), items: st.items, now: st.now}
}

// item draws a skewed item.
func (st *stream) item() string {
	n := len(st.items)
	i := st.rng.IntN(n)
	if st.rng.IntN(2) == 0 {
		i = st.rng.IntN(1 + i/4)
	}
	return st.items[i]
}

// step applies one random operation to w and o.
func (st *stream) step(w *Window, o *exact) {
	slide := o.cfg.slide
	switch r := st.rng.IntN(100); {
	case r < 80: // an event near now, sometimes late or far ahead
		t := st.now.Add(time.Duration(st.rng.Int64N(int64(3*slide))) - slide)
		switch st.rng.IntN(40) {
		case 0:
			t = t.Add(-o.cfg.window - 2*slide)
		case 1:
			t = t.Add(o.cfg.lookahead + slide)
		}
		it := st.item()
		w.Add(it, t)
		o.add(it, t)
	case r < 97: // the watermark moves
		st.now = st.now.Add(time.Duration(st.rng.Int64N(int64(2 * slide))))
		w.Advance(st.now)
		o.advance(st.now)
	case r < 99: // a jump far ahead
		st.now = st.now.Add(o.cfg.window + o.cfg.lookahead + time.Duration(st.rng.IntN(3))*o.cfg.window)
		w.Advance(st.now)
		o.advance(st.now)
	default: // a watermark in the past does nothing
		w.Advance(st.now.Add(-o.cfg.window))
		o.advance(st.now.Add(-o.cfg.window))
	}
}

// verify checks the window against the oracle: every invariant, the
// statistics, and for every item that the truth lies in its bounds.
func verify(t *testing.T, w *Window, o *exact, items []string) {
	t.Helper()
	if err := w.check(); err != nil {
		t.Fatalf("invariant: %v", err)
	}
	in, ahead := o.totals()
	st := w.Stats()
	if st.Events != in || st.Pending != ahead || st.DroppedLate != o.late || st.DroppedEarly != o.early {
		t.Fatalf("stats %+v, oracle in=%d ahead=%d late=%d early=%d", st, in, ahead, o.late, o.early)
	}
	for _, it := range items {
		got := w.Count(it)
		truth := o.count(it)
		if truth > got.Count || truth < got.Count-got.Error || got.Error > got.Count {
			t.Fatalf("%s: true count %d outside [%d − %d, %d]", it, truth, got.Count, got.Error, got.Count)
		}
	}
	top := w.TopK()
	if len(top) > w.cfg.k {
		t.Fatalf("TopK returned %d items, k=%d", len(top), w.cfg.k)
	}
	for i, it := range top {
		truth := o.count(it.Item)
		if truth > it.Count || truth < it.Count-it.Error || it.Count == 0 {
			t.Fatalf("TopK %s: true count %d outside [%d − %d, %d]", it.Item, truth, it.Count, it.Error, it.Count)
		}
		if i > 0 && compareItems(top[i-1], it) >= 0 {
			t.Fatalf("TopK out of order at %d: %+v then %+v", i, top[i-1], it)
		}
	}
}
