package sketch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch/exact"
)

// newExact returns the oracle of the property tests: exact counts with the
// same rules as a Window of cfg for the window's end, the lookahead, late and
// early events.
func newExact(cfg config) *exact.Counter {
	opts := []exact.Option{exact.WithLookahead(cfg.lookahead)}
	if cfg.late == LateOldest {
		opts = append(opts, exact.WithLateOldest())
	}
	o, err := exact.New(cfg.window, cfg.slide, opts...)
	if err != nil {
		panic(fmt.Sprintf("BUG: oracle for %+v: %v", cfg, err))
	}
	return o
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
func (st *stream) step(w *Window, o *exact.Counter) {
	cfg := w.cfg
	slide := cfg.slide
	switch r := st.rng.IntN(100); {
	case r < 80: // an event near now, sometimes late or far ahead
		t := st.now.Add(time.Duration(st.rng.Int64N(int64(3*slide))) - slide)
		switch st.rng.IntN(40) {
		case 0:
			t = t.Add(-cfg.window - 2*slide)
		case 1:
			t = t.Add(cfg.lookahead + slide)
		}
		it := st.item()
		w.Add(it, t)
		o.Add(it, t)
	case r < 97: // the watermark moves
		st.now = st.now.Add(time.Duration(st.rng.Int64N(int64(2 * slide))))
		w.Advance(st.now)
		o.Advance(st.now)
	case r < 99: // a jump far ahead
		st.now = st.now.Add(cfg.window + cfg.lookahead + time.Duration(st.rng.IntN(3))*cfg.window)
		w.Advance(st.now)
		o.Advance(st.now)
	default: // a watermark in the past does nothing
		w.Advance(st.now.Add(-cfg.window))
		o.Advance(st.now.Add(-cfg.window))
	}
}

// verify checks the window against the oracle: every invariant, the
// statistics, and for every item that the truth lies in its bounds.
func verify(t testing.TB, w *Window, o *exact.Counter, items []string) {
	t.Helper()
	// TopK is the k first candidates by their bounds, one candidate at a time;
	// before check, which flushes the slot cache's pending events.
	top := w.TopK()
	var bounds []Item
	for _, e := range w.heap {
		if it := w.bounds(e.c); it.Count > 0 {
			bounds = append(bounds, it)
		}
	}
	slices.SortFunc(bounds, compareItems)
	if want := bounds[:min(len(bounds), w.cfg.k)]; !slices.Equal(top, want) {
		t.Fatalf("TopK = %v, want the k first candidates %v", top, want)
	}
	if err := w.check(); err != nil {
		t.Fatalf("invariant: %v", err)
	}
	want := o.Stats()
	st := w.Stats()
	if st.Events != want.Events || st.Pending != want.Pending || st.DroppedLate != want.DroppedLate || st.DroppedEarly != want.DroppedEarly {
		t.Fatalf("stats %+v, oracle %+v", st, want)
	}
	start, end := w.Bounds()
	if wantStart, wantEnd := o.Bounds(); !start.Equal(wantStart) || !end.Equal(wantEnd) {
		t.Fatalf("window [%v, %v), oracle's [%v, %v)", start, end, wantStart, wantEnd)
	}
	for _, it := range items {
		got := w.Count(it)
		truth := o.Count(it)
		if truth > got.Count || truth < got.Count-got.Error || got.Error > got.Count {
			t.Fatalf("%s: true count %d outside [%d − %d, %d]", it, truth, got.Count, got.Error, got.Count)
		}
	}
	if len(top) > w.cfg.k {
		t.Fatalf("TopK returned %d items, k=%d", len(top), w.cfg.k)
	}
	for i, it := range top {
		truth := o.Count(it.Item)
		if truth > it.Count || truth < it.Count-it.Error || it.Count == 0 {
			t.Fatalf("TopK %s: true count %d outside [%d − %d, %d]", it.Item, truth, it.Count, it.Error, it.Count)
		}
		if i > 0 && compareItems(top[i-1], it) >= 0 {
			t.Fatalf("TopK out of order at %d: %+v then %+v", i, top[i-1], it)
		}
	}
}
