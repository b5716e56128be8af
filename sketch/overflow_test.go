package sketch

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch/exact"
)

// TestFullWindowDropsEvents checks the guard that keeps 32-bit counters from
// overflowing: a window holding 2^32 − 1 events drops further ones and
// counts them, and a merge that could exceed it fails and changes nothing.
func TestFullWindowDropsEvents(t *testing.T) {
	cfg := defaultConfig()
	cfg.resolve()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	w := newWindow(cfg)
	w.Advance(t0)
	w.Add("a", t0)
	w.liveEvents = maxEvents // as if the blocks were full
	w.Add("b", t0)
	if w.stats.DroppedFull != 1 || w.Count("b").Count != 0 {
		t.Fatalf("full window took an event: %+v", w.stats)
	}
	other := newWindow(cfg)
	other.Advance(t0)
	other.Add("c", t0)
	before, _ := w.MarshalBinary()
	if err := w.Merge(other); !errors.Is(err, ErrOverflow) {
		t.Fatalf("Merge of full windows: %v", err)
	}
	if after, _ := w.MarshalBinary(); !bytes.Equal(before, after) {
		t.Fatal("failed merge changed the window")
	}
}

// widthsCase feeds the same events to a window whose counters start in 16
// bits, a twin widened to 32 bits from the start, and the exact counter.
// The shape is collision-free for its items (chosen with distinct columns
// in every row) with a block per slot, so every count is exact.
type widthsCase struct {
	t            testing.TB
	narrow, wide *Window
	o            *exact.Counter
	items        []string
	t0           time.Time
}

func newWidthsCase(t testing.TB) *widthsCase {
	cfg := config{width: 1024, depth: 4, k: 1, candidates: 1, window: 4 * time.Second,
		slide: time.Second, lookahead: time.Second, blocks: 4, late: LateDrop}
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	c := &widthsCase{t: t, narrow: newWindow(cfg), wide: newWindow(cfg), o: newExact(cfg),
		t0: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	c.wide.widen()
	// Items whose columns differ from every other's in every row.
	used := map[int]bool{}
	for i := 0; len(c.items) < 4; i++ {
		it := fmt.Sprintf("item-%d", i)
		var idx [maxDepth]int
		c.narrow.columns(Hash(it), &idx)
		if used[idx[0]] || used[idx[1]] || used[idx[2]] || used[idx[3]] {
			continue
		}
		for _, j := range idx[:4] {
			used[j] = true
		}
		c.items = append(c.items, it)
	}
	return c
}

func (c *widthsCase) add(item string, n, slot int) {
	ts := c.t0.Add(time.Duration(slot) * time.Second)
	for range n {
		c.narrow.Add(item, ts)
		c.wide.Add(item, ts)
		c.o.Add(item, ts)
	}
	if late, early, _ := c.narrow.Dropped(); late+early != 0 {
		c.t.Fatalf("the test dropped events: %d late, %d early", late, early)
	}
}

func (c *widthsCase) advance(slot int) {
	ts := c.t0.Add(time.Duration(slot) * time.Second)
	c.narrow.Advance(ts)
	c.wide.Advance(ts)
	c.o.Advance(ts)
}

// same checks both windows against the oracle (bounds, invariants, and every
// count exact), that they encode to the same bytes, that the narrow-born
// one has the counter width wantWide, and that the encoding round-trips.
func (c *widthsCase) same(step string, wantWide bool) {
	t := c.t
	t.Helper()
	for _, w := range []*Window{c.narrow, c.wide} {
		verify(t, w, c.o, c.items)
		for _, it := range c.items {
			if got, want := w.Count(it).Count, c.o.Count(it); got != want {
				t.Fatalf("%s: %s counted %d, exactly %d", step, it, got, want)
			}
		}
	}
	if c.narrow.wide != wantWide {
		t.Fatalf("%s: counters wide = %v, want %v", step, c.narrow.wide, wantWide)
	}
	enc := mustMarshal(t, c.narrow)
	if !bytes.Equal(enc, mustMarshal(t, c.wide)) {
		t.Fatalf("%s: the 16-bit and 32-bit windows encode differently", step)
	}
	var r Window
	if err := r.UnmarshalBinary(enc); err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	if !bytes.Equal(mustMarshal(t, &r), enc) {
		t.Fatalf("%s: re-encoding differs", step)
	}
	agg, _ := r.counters32()
	if top := slices.Max(agg); r.wide != (top > narrowBelow) {
		t.Fatalf("%s: decoded with wide = %v, largest counter %d", step, r.wide, top)
	}
}

// TestCounterWidths drives the sketch's 16-bit counters to and past 65535,
// in one block and spread over blocks that expire, and checks that the
// switch to 32 bits and back is exact: every count equals the exact
// counter's, and the state is the one of a window that counted in 32 bits
// throughout.
func TestCounterWidths(t *testing.T) {
	c := newWidthsCase(t)
	top, x, y := c.items[0], c.items[1], c.items[2]
	// Events are added at slots before the window's end (the watermark),
	// so that they are in the window, not ahead of it.
	c.advance(0)
	c.add(top, 150_000, 0) // the candidate: the other items go to the sketch
	c.add(x, math.MaxUint16, 0)
	c.advance(1)
	c.same("65535 in one block", false)
	c.add(x, 1, 0)
	c.same("65536 in one block", true)
	c.add(x, 30_000, 1)
	c.add(y, math.MaxUint16, 1)
	c.advance(2)
	c.same("two blocks", true)
	c.advance(5) // slot 0 leaves: y's 65535 remain
	c.same("first block expired", true)
	c.advance(6) // slot 1 leaves: nothing remains
	c.same("second block expired", false)

	// Past 65535 only across blocks, then down to exactly narrowBelow by
	// expiry.
	c.add(top, 200_000, 6)
	c.add(x, narrowBelow, 6)
	c.advance(7)
	c.add(x, narrowBelow+1, 7)
	c.advance(8)
	c.same("65535 across two blocks", false)
	c.advance(9)
	c.add(x, 1, 9)
	c.advance(10)
	c.add(x, narrowBelow, 10)
	c.advance(11) // slot 6 leaves: 65536 remain
	c.same("65536 across three blocks", true)
	c.advance(12) // slot 7 leaves: 32768 remain
	c.same("32768 left", true)
	c.advance(14) // slot 9 leaves: 32767 remain
	c.same("32767 left", false)
	c.add(top, 200_000, 14) // the earlier candidate left with slot 6
	c.add(y, 40_000, 14)
	c.advance(15)
	c.add(y, 30_000, 15)
	c.advance(16)
	c.same("70000 across two blocks", true)
	c.advance(19) // slot 14 leaves: 30000 remain
	c.same("30000 left", false)
	c.add(top, 200_000, 19)
	c.add(y, 70_000, 19)
	c.advance(20)
	c.same("70000 before a jump", true)
	c.advance(100) // a jump past the ring clears everything
	c.same("after the jump", false)
}

// TestCounterWidthsBulk checks the other two ways into the sketch with
// many events at once: an evicted candidate's counts written back in one
// update, and a merge of two 16-bit windows whose sums need 32 bits.
func TestCounterWidthsBulk(t *testing.T) {
	t.Run("write-back", func(t *testing.T) {
		c := newWidthsCase(t)
		var idx [maxDepth]int
		c.narrow.columns(Hash("bulk"), &idx)
		c.narrow.sketchAdd(0, &idx, math.MaxUint16-1)
		c.wide.sketchAdd(0, &idx, math.MaxUint16-1)
		if c.narrow.wide || c.narrow.blockMin(0, &idx) != math.MaxUint16-1 {
			t.Fatalf("after 65534: wide %v, counter %d", c.narrow.wide, c.narrow.blockMin(0, &idx))
		}
		c.narrow.sketchAdd(0, &idx, 2)
		c.wide.sketchAdd(0, &idx, 2)
		if !c.narrow.wide || c.narrow.blockMin(0, &idx) != math.MaxUint16+1 || c.narrow.aggMin(&idx) != math.MaxUint16+1 {
			t.Fatalf("after 65536: wide %v, counter %d", c.narrow.wide, c.narrow.blockMin(0, &idx))
		}
		na, nb := c.narrow.counters32()
		wa, wb := c.wide.counters32()
		if !slices.Equal(na, wa) || !slices.Equal(nb, wb) {
			t.Fatal("the widened counters differ from the 32-bit ones")
		}
	})
	t.Run("merge", func(t *testing.T) {
		a, b := newWidthsCase(t), newWidthsCase(t)
		top, x := a.items[0], a.items[1]
		for i, c := range []*widthsCase{a, b} {
			c.advance(0)
			c.add(top, 100_000, 0)
			c.add(x, []int{40_000, math.MaxUint16 + 1 - 40_000}[i], 0) // 65536 merged
			c.advance(1)
			c.same("before the merge", false)
		}
		if err := a.narrow.Merge(b.narrow); err != nil {
			t.Fatal(err)
		}
		if err := a.wide.Merge(b.narrow); err != nil {
			t.Fatal(err)
		}
		if err := a.o.Merge(b.o); err != nil {
			t.Fatal(err)
		}
		a.same("merged", true)
		// The other way round: a 32-bit window into a 16-bit one.
		if err := b.narrow.Merge(a.wide); err != nil {
			t.Fatal(err)
		}
		if err := b.o.Merge(a.o); err != nil {
			t.Fatal(err)
		}
		if got, want := b.narrow.Count(x).Count, b.o.Count(x); got != want || !b.narrow.wide {
			t.Fatalf("merged again: %s counted %d, exactly %d (wide %v)", x, got, want, b.narrow.wide)
		}
	})
}
