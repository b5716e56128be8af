package hot

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/topics"
)

// fakeStore acknowledges every partial at once and has no loop records to read; it counts the
// reads of a loop partition's end (one per turn of a wait).
type fakeStore struct{ ends atomic.Int64 }

func (*fakeStore) produceAsync(_ context.Context, r *kgo.Record, done func(*kgo.Record, error)) {
	done(r, nil)
}
func (*fakeStore) producerContext() context.Context                           { return context.Background() }
func (*fakeStore) produce(context.Context, ...*kgo.Record) error              { return nil }
func (f *fakeStore) end(context.Context, string, int32) (int64, error)        { f.ends.Add(1); return 0, nil }
func (*fakeStore) latest(context.Context, string, int32) (*kgo.Record, error) { return nil, nil }
func (*fakeStore) offsets(context.Context, string) (map[int32]int64, map[int32]int64, error) {
	return nil, nil, nil
}
func (*fakeStore) committed(context.Context, string, string) (map[int32]int64, error) {
	return nil, nil
}
func (*fakeStore) read(context.Context, string, int32, int64, int64, func(*kgo.Record) error) error {
	return errors.New("fakeStore: no records")
}

// TestReachableBurst: an input partition whose view (its own loop partition's) moved an hour
// on routes a burst of 100,000 terms, 3 times maxHeld, to a loop partition of the same
// process that has not applied those markers yet (in flight). Routed at once, as before
// reachable, the loop partition holds maxHeld of them and drops the rest as early; reachable
// waits until it applied the markers, and then it counts every one.
func TestReachableBurst(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Partitions, cfg.Log = 2, slog.New(slog.DiscardHandler)
	store := &fakeStore{}
	p := newProcessor(cfg, store)
	ctx := t.Context()
	now := time.Now()
	state := func() *windowState {
		w, err := p.newWindowState(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	mark := func(w *windowState, q int32, at time.Time) {
		t.Helper()
		for input := range int32(cfg.Partitions) {
			r := topics.HotLoopRecord{Kind: topics.HotLoopMarker, Ms: at.UnixMilli(), Partition: input}
			if err := p.apply(ctx, w, q, "", r); err != nil {
				t.Fatal(err)
			}
		}
	}
	const n = 3 * maxHeld
	t0 := now.Add(-3 * time.Hour).Truncate(cfg.Slide)
	t1 := t0.Add(time.Hour)
	ms := t1.Add(5 * time.Minute).UnixMilli() // within what the view at t1 admits, beyond the reach at t0
	burst := topics.HotLoopRecord{Kind: topics.HotLoopTerms, Partition: 0, Terms: make([]topics.HotLoopEntry, n)}
	for i := range burst.Terms {
		burst.Terms[i] = topics.HotLoopEntry{Term: "snow", Ms: ms, Offset: int64(i)}
	}

	own, to, before := state(), state(), state()
	p.local[0].Store(own)
	p.local[1].Store(to)
	for _, w := range []*windowState{own, to, before} {
		mark(w, 1, t0)
	}
	mark(own, 0, t1)
	if !p.rules.admits(own.view, ms, now) {
		t.Fatal("the view at t1 does not admit the burst")
	}

	// Before: the burst overtakes the markers.
	if err := p.apply(ctx, before, 1, "", burst); err != nil {
		t.Fatal(err)
	}
	if len(before.held) != maxHeld || before.dropped != n-maxHeld {
		t.Fatalf("routed at once: %d held, %d dropped; want %d held, %d dropped", len(before.held), before.dropped, maxHeld, n-maxHeld)
	}

	done := make(chan error, 1)
	go func() { done <- p.reachable(ctx, own, 0, 1, ms) }()
	for deadline := time.Now().Add(time.Minute); store.ends.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("reachable did not wait")
		}
	}
	select {
	case err := <-done:
		t.Fatalf("reachable returned (%v) before the loop partition applied the markers", err)
	default:
	}
	mark(to, 1, t1) // the markers in flight arrive: the loop partition's goroutine applies them
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("reachable still waits after the loop partition applied the markers")
	}
	for range n { // the rest of the burst goes without waiting
		if err := p.reachable(ctx, own, 0, 1, ms); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.apply(ctx, to, 1, "", burst); err != nil {
		t.Fatal(err)
	}
	if len(to.held) != 0 || to.dropped != 0 {
		t.Fatalf("after waiting: %d held, %d dropped; want none", len(to.held), to.dropped)
	}
	if st := to.win.Stats(); st.Events+st.Pending != n {
		t.Fatalf("after waiting: %+v; want the %d terms in the window or ahead of it", st, n)
	}
}
