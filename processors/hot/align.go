package hot

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/sketch"
)

// This file holds the waits of watermark alignment: an input partition's callback waits
// before routing a term until its own loop partition's view admits it (align) and, when this
// process holds the term's loop partition, until that one applied the markers the view was
// built from (reachable).

// newWindowState returns a loop partition's state of session ctx, of partitions input
// partitions, with an empty window win.
func newWindowState(ctx context.Context, win *sketch.Window, partitions int, now time.Time) *windowState {
	w := &windowState{view: newView(), win: win, seen: map[int32]int64{}, before: map[int32]map[int64]uint64{}, loopOffset: -1, admitBelow: math.MinInt64,
		saved: now, session: ctx, applied: make([]atomic.Int64, partitions), rested: make([]atomic.Bool, partitions)}
	w.reach.Store(math.MaxInt64) // the window has not started: nothing is held
	return w
}

// advanced publishes w's reach, the watermarks it applied and its idle input partitions after
// its state changed.
func (w *windowState) advanced(lookaheadMs int64) {
	if _, end := w.win.Bounds(); !end.IsZero() {
		w.reach.Store(end.UnixMilli() + lookaheadMs)
	}
	for part, ms := range w.marks {
		if 0 <= part && int(part) < len(w.applied) {
			w.applied[part].Store(ms)
		}
	}
	for part := range w.rested {
		w.rested[part].Store(w.idle[int32(part)])
	}
}

// covers reports whether w applied every marker of v (another loop partition's view): each
// watermark, and each idle marker that is the latest word of its input partition.
func (w *windowState) covers(v view) bool {
	for part, ms := range v.marks {
		if 0 <= part && int(part) < len(w.applied) && w.applied[part].Load() < ms {
			return false
		}
	}
	for part := range v.idle {
		if 0 <= part && int(part) < len(w.rested) && !w.rested[part].Load() {
			return false
		}
	}
	return true
}

// reachable waits, when this process holds loop partition q and an event at ms is beyond its
// reach, until q applied every marker the view of own (the state of loop partition part, of
// this goroutine) holds, which align judged ms by: the markers in flight to q then come
// before the term in q's log, so q does not hold it, whatever the burst (a loop partition
// holds at most maxHeld terms). Meanwhile it reads own's records (readLoop), so that two
// partitions waiting for each other both go on; own's view is judged as it is at each turn
// (an input partition idle in own's view may have spoken again in q's: own reads that too).
// A loop partition of another process is judged by own's view only (align), as are events
// from the future (admits).
func (p *processor) reachable(ctx context.Context, own *windowState, part, q int32, ms int64) error {
	t := p.local[q].Load()
	if t == nil || own == nil || t == own || own.session != ctx || ms < t.reach.Load() {
		return nil
	}
	return waitUntil(ctx, func(now time.Time) bool {
		return ms < t.reach.Load() || t.covers(own.view) || ms >= now.UnixMilli()+p.rules.aheadMs() || t.session.Err() != nil
	}, p.readLoop(ctx, own, part))
}

// align waits until an event at ms may be routed (rules.admits), judged from the view of the
// loop partition of the same number, which this goroutine owns too (goka co-partitioning). That
// partition's records are behind this callback in the same goroutine, so while waiting it
// reads them itself from Kafka (catch-up) and applies them; goka delivers them later and
// count skips them. Every loop partition receives every input partition's markers, so the
// view is global, across instances. It returns ctx's error when the session ends.
func (p *processor) align(ctx goka.Context, in *inputState, ms int64) error {
	w := in.win
	if w == nil || w.session != ctx.Context() {
		var err error
		if w, err = p.window(ctx.Context(), ctx.Partition()); err != nil {
			return err
		}
		in.win = w
	}
	if ms < w.admitBelow { // the view has not changed since: the bound holds
		return nil
	}
	err := waitUntil(ctx.Context(), func(now time.Time) bool { return p.rules.admits(w.view, ms, now) },
		p.readLoop(ctx.Context(), w, ctx.Partition()))
	if err != nil {
		return err
	}
	w.admitBelow = p.rules.admitBelow(w.view)
	return nil
}

// waitUntil returns once ok holds, or ctx's error or step's when one fails. Between two
// checks it calls step; when that moved nothing it waits, from 1 ms up to 100 ms.
func waitUntil(ctx context.Context, ok func(now time.Time) bool, step func() (moved bool, err error)) error {
	wait := time.Millisecond
	for now := time.Now(); !ok(now); now = time.Now() {
		moved, err := step()
		switch {
		case err != nil:
			return err
		case moved:
			wait = time.Millisecond
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
			wait = min(2*wait, 100*time.Millisecond)
		}
	}
	return nil
}

// readLoop is the step of a wait in the callback of input partition q (waitUntil): it applies
// loop partition q's records that w lacks, which are behind the callback in the same goroutine,
// reading them from Kafka (catchUp; goka delivers them later and count skips them). They may
// move the watermarks: moved reports whether there were any.
func (p *processor) readLoop(ctx context.Context, w *windowState, q int32) func() (bool, error) {
	return func() (bool, error) {
		end, err := p.io.end(ctx, p.loop, q)
		if err != nil || end <= w.loopOffset+1 {
			return false, err
		}
		return true, p.catchUp(ctx, w, q, end)
	}
}
