package hot

import (
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankstream/rankstream/internal/obs"
)

// Reasons a loop partition drops a search query: the label of rankstream_hot_dropped_total.
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
	log     *slog.Logger
	metrics map[string]prometheus.Counter
	mu      sync.Mutex
	last    time.Time
	pending map[string]uint64
}

func newDropLog(log *slog.Logger) *dropLog {
	d := &dropLog{log: log, metrics: map[string]prometheus.Counter{}, pending: map[string]uint64{}}
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
