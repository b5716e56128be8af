package hot

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/topics"
)

// TestHeldTerms: a term dated beyond the sketch's reach (window end + lookahead) is held, not
// dropped, and counted once the window gets there; one dated more than the lookahead after
// the wall clock, or past maxHeld, is dropped as early and reported in the next partial.
func TestHeldTerms(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Partitions, cfg.Log = 1, slog.New(slog.DiscardHandler)
	p := newProcessor(cfg, nil)
	win, err := sketch.New(sketch.WithWindow(cfg.Window), sketch.WithSlide(cfg.Slide), sketch.WithK(cfg.K), sketch.WithLookahead(cfg.Lookahead))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	w := &windowState{view: newView(now), win: win, seen: map[int32]int64{}, loopOffset: -1}
	end := now.Add(-3 * time.Hour).Truncate(cfg.Slide)
	w.win.Advance(end)
	term := func(offset int64, at time.Time) {
		t.Helper()
		if err := p.apply(context.Background(), w, 0, "snow", topics.HotLoopRecord{Kind: topics.HotLoopTerm, Ms: at.UnixMilli(), Offset: offset}); err != nil {
			t.Fatal(err)
		}
	}
	far := end.Add(cfg.Lookahead + time.Minute) // beyond the reach, within the wall clock
	term(0, end.Add(-time.Minute))
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
}
