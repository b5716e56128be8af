package hot

import (
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// Reasons a loop partition drops a search query: the label of rankstream_hot_dropped_total.
// This file also holds the terms beyond the sketch's reach (hold, release).
const (
	reasonLate  = "late"  // its window was already emitted (or it is older than the window)
	reasonEarly = "early" // further ahead of the window than the lookahead
	reasonFull  = "full"  // the window already held 2^32 - 1 events
)

// dropLogEvery is the least time between two log lines about dropped queries.
const dropLogEvery = 10 * time.Second

// dropLog counts dropped queries in rankstream_hot_dropped_total and logs them at warn, at
// most once per dropLogEvery, with the counts since the previous line.
type dropLog struct {
	log        *slog.Logger
	metrics    map[string]prometheus.Counter
	unwindowed prometheus.Counter // queries dated before the first window (firstMove)
	mu         sync.Mutex
	last       time.Time
	pending    map[string]uint64
}

func newDropLog(log *slog.Logger) *dropLog {
	d := &dropLog{log: log, metrics: map[string]prometheus.Counter{}, unwindowed: obs.HotUnwindowed, pending: map[string]uint64{}}
	for _, r := range []string{reasonLate, reasonEarly, reasonFull} {
		d.metrics[r] = obs.HotDropped.WithLabelValues(r)
	}
	return d
}

// add records n queries dropped for reason by loop partition q.
func (d *dropLog) add(q int32, reason string, n uint64) {
	d.metrics[reason].Add(float64(n))
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pending[reason] += n
	if now := time.Now(); now.Sub(d.last) >= dropLogEvery {
		d.last = now
		d.log.Warn("hot: search queries dropped (counted in rankstream_hot_dropped_total and in the snapshots' dropped)",
			"late", d.pending[reasonLate], "early", d.pending[reasonEarly], "full", d.pending[reasonFull],
			"last_partition", q, "since", dropLogEvery)
		clear(d.pending)
	}
}

// add counts a term in the sketch, counting what it drops; it tells whether the sketch holds
// the term.
func (p *processor) add(w *windowState, q int32, term string, ms int64) bool {
	late, early, full := w.win.Dropped()
	w.win.Add(term, time.UnixMilli(ms))
	late2, early2, full2 := w.win.Dropped()
	p.drop(w, q, reasonLate, late2-late)
	p.drop(w, q, reasonEarly, early2-early)
	p.drop(w, q, reasonFull, full2-full)
	return late2 == late && early2 == early && full2 == full
}

// maxHeld bounds a loop partition's held terms. The loop's terms records arrive in bursts (up
// to 256 KiB of terms per input partition and flush), so a burst overtaking markers still in
// flight can put thousands of terms past the reach at once: 1,000 dropped 3,320 queries of a
// skewed backlog once (TestHotSearchBacklog/skew/8). 32,768 terms of at most MaxQueryBytes
// keep a checkpoint (the window's 3.4 MiB with the default shape, plus the list) under
// topics.MaxCheckpointBytes.
const maxHeld = 32768

// hold keeps a term dated beyond the sketch's reach (the window end plus the lookahead) until
// the window gets there (release). Alignment keeps backlogs within the reach, so this holds
// only what slips past it: a term routed by a partition taken away while it waited, one
// overtaking the markers in flight, a query dated a little in the future. A term dated more
// than the lookahead after the wall clock (no window reaches it soon), or past maxHeld terms,
// is dropped (early) instead: memory stays bounded whatever the input.
func (p *processor) hold(w *windowState, q int32, t topics.HotHeldTerm) {
	if len(w.held) >= maxHeld || t.Ms >= time.Now().UnixMilli()+p.shape.LookaheadMs {
		p.drop(w, q, reasonEarly, 1)
		return
	}
	w.held = append(w.held, t)
}

// release counts the held terms the window's reach now covers, in their arrival order.
func (p *processor) release(w *windowState, q int32) {
	_, end := w.win.Bounds()
	reach := end.UnixMilli() + p.shape.LookaheadMs
	kept := w.held[:0]
	for _, t := range w.held {
		if t.Ms < reach {
			p.add(w, q, t.Term, t.Ms)
		} else {
			kept = append(kept, t)
		}
	}
	clear(w.held[len(kept):])
	w.held = kept
}

// drop counts n events dropped for reason by loop partition q: in the metric, the rate-limited
// log and the next partial.
func (p *processor) drop(w *windowState, q int32, reason string, n uint64) {
	if n == 0 {
		return
	}
	w.dropped += n
	p.drops.add(q, reason, n)
}
