package hot

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/topics"
)

// TestHeldTerms: a term dated beyond the sketch's reach (window end + lookahead) is held, not
// dropped, and counted once the window gets there; one dated more than the lookahead after
// the wall clock, or past maxHeld, is dropped as early and reported in the next partial.
func TestHeldTerms(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Partitions, cfg.Log = 1, slog.New(slog.DiscardHandler)
	p := newProcessor(cfg, nil)
	now := time.Now()
	w, err := p.newWindowState(t.Context(), now)
	if err != nil {
		t.Fatal(err)
	}
	end := now.Add(-3 * time.Hour).Truncate(cfg.Slide)
	w.win.Advance(end)
	term := func(offset int64, at time.Time) {
		t.Helper()
		r := topics.HotLoopRecord{Kind: topics.HotLoopTerms, Terms: []topics.HotLoopEntry{{Term: "snow", Ms: at.UnixMilli(), Offset: offset}}}
		if err := p.apply(context.Background(), w, 0, "", r); err != nil {
			t.Fatal(err)
		}
	}
	far := end.Add(cfg.Lookahead + time.Minute) // beyond the reach, within the wall clock
	// The first one in the single-term record of older versions (keyed by the term).
	if err := p.apply(context.Background(), w, 0, "snow", topics.HotLoopRecord{Kind: topics.HotLoopTerm, Ms: end.Add(-time.Minute).UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	term(1, far)
	term(2, far)
	term(3, now.Add(cfg.Lookahead+time.Minute)) // from the future: dropped
	if len(w.held) != 2 || w.dropped != 1 || w.win.Count("snow").Count != 1 {
		t.Fatalf("held %d, dropped %d, counted %d; want 2 held, 1 dropped, 1 counted", len(w.held), w.dropped, w.win.Count("snow").Count)
	}
	w.win.Advance(far.Add(-cfg.Lookahead)) // the reach is now exactly far: still held
	p.release(w, 0)
	if len(w.held) != 2 {
		t.Fatalf("%d held once the reach is at their time, want 2", len(w.held))
	}
	w.win.Advance(far.Add(-cfg.Lookahead + cfg.Slide))
	p.release(w, 0)
	if st := w.win.Stats(); len(w.held) != 0 || st.Events != 1 || st.Pending != 2 {
		t.Fatalf("after the window reached them: %d held, %+v; want 0 held, 1 in the window and 2 ahead of it", len(w.held), st)
	}
	for i := range maxHeld + 1 {
		term(int64(10+i), far.Add(time.Hour))
	}
	if len(w.held) != maxHeld || w.dropped != 2 {
		t.Fatalf("%d held, %d dropped; want %d held and the next one dropped", len(w.held), w.dropped, maxHeld)
	}
	// A full list of the longest terms still fits a checkpoint with the default window.
	long := strings.Repeat("x", topics.MaxQueryBytes)
	for i := range w.held {
		w.held[i].Term = long
	}
	state, err := w.win.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	cp := topics.HotCheckpoint{LoopOffset: w.loopOffset, EndMs: w.endMs, Dropped: w.dropped, Held: w.held, Shape: p.shape, Seen: w.seen, Marks: w.marks, First: w.first, Window: state}
	if n := len(cp.Encode()); n > topics.MaxCheckpointBytes {
		t.Fatalf("a checkpoint with %d held terms of %d bytes: %d bytes, over the %d a checkpoint may have", maxHeld, topics.MaxQueryBytes, n, topics.MaxCheckpointBytes)
	}
}

// TestTermsCountedOnce: a loop partition counts each input offset once whatever the records
// that carry it: the ranges a replay or the restart after a crash flushes overlap the first
// run's without matching its boundaries, and an older version's single-term records may come
// before the terms records of the same offsets (an upgrade).
func TestTermsCountedOnce(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Partitions, cfg.Log = 1, slog.New(slog.DiscardHandler)
	p := newProcessor(cfg, nil)
	w, err := p.newWindowState(t.Context(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour).Truncate(cfg.Slide)
	w.win.Advance(start)
	entry := func(offset int64) topics.HotLoopEntry {
		return topics.HotLoopEntry{Term: fmt.Sprint("term ", offset%3), Ms: start.UnixMilli() - 1000 + offset, Offset: offset}
	}
	// The loop partition gets every second offset of input partition 5, from 0 to 38.
	terms := func(from, to int64) topics.HotLoopRecord {
		r := topics.HotLoopRecord{Kind: topics.HotLoopTerms, Partition: 5}
		for o := from; o <= to; o += 2 {
			r.Terms = append(r.Terms, entry(o))
		}
		return r
	}
	var recs []topics.HotLoopRecord
	for o := int64(0); o <= 6; o += 2 { // an older version's records
		e := entry(o)
		recs = append(recs, topics.HotLoopRecord{Kind: topics.HotLoopTerm, Partition: 5, Ms: e.Ms, Offset: o})
	}
	recs = append(recs, terms(0, 10), terms(12, 20), // the first run after the upgrade
		terms(4, 14), terms(16, 30), terms(32, 38), // a crash: the restart flushes from offset 4 on
		terms(0, 38)) // a replay
	for _, r := range recs {
		key := ""
		if r.Kind == topics.HotLoopTerm {
			key = entry(r.Offset).Term
		}
		if err := p.apply(context.Background(), w, 0, key, r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range int64(3) {
		term := fmt.Sprint("term ", i)
		want := uint64(0)
		for o := int64(0); o <= 38; o += 2 {
			if o%3 == i {
				want++
			}
		}
		if got := w.win.Count(term); got.Count != want || got.Error != 0 {
			t.Errorf("%q counted %d (error %d), want %d", term, got.Count, got.Error, want)
		}
	}
	if w.seen[5] != 39 {
		t.Errorf("next offset of input partition 5: %d, want 39", w.seen[5])
	}
}
