package loadgen

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProduceConfig says how much to send and how fast.
type ProduceConfig struct {
	Topic string
	// Count stops after this many records; 0 runs until ctx ends or the source runs out.
	Count int
	// Rate is records per second; 0 sends as fast as the client takes them.
	Rate float64
	// Start is the simulated clock's first instant [now]; Speed is how many simulated seconds
	// pass per real second [1]. Record timestamps follow the simulated clock.
	Start time.Time
	Speed float64
	// Progress is how often a progress line is logged [2 s].
	Progress time.Duration
}

// Stats is what Produce sent.
type Stats struct {
	Sent, Failed int64
	Elapsed      time.Duration
}

// Produce sends what next generates for each simulated instant into cl asynchronously, at the
// configured rate, logging progress, and waits until every record is acknowledged. It stops
// after Count records, when ctx ends, or when next returns no record (the end of a finite
// source such as a Replay).
func Produce(ctx context.Context, cl *kgo.Client, cfg ProduceConfig, next func(now time.Time) []Record, log *slog.Logger) (Stats, error) {
	if cfg.Speed <= 0 {
		cfg.Speed = 1
	}
	if cfg.Progress <= 0 {
		cfg.Progress = 2 * time.Second
	}
	begin := time.Now()
	if cfg.Start.IsZero() {
		cfg.Start = begin
	}
	sim := func(real time.Time) time.Time {
		return cfg.Start.Add(time.Duration(float64(real.Sub(begin)) * cfg.Speed))
	}
	var sent, failed atomic.Int64
	var firstErr error
	var errOnce sync.Once
	done := func(_ *kgo.Record, err error) {
		if err != nil && ctx.Err() != nil {
			return // aborted by shutdown, not a failure
		}
		if err != nil {
			failed.Add(1)
			errOnce.Do(func() { firstErr = err })
			return
		}
		sent.Add(1)
	}

	progress := time.NewTicker(cfg.Progress)
	defer progress.Stop()
	produced := 0
	for cfg.Count == 0 || produced < cfg.Count {
		if ctx.Err() != nil {
			break
		}
		select {
		case <-progress.C:
			el := time.Since(begin)
			log.Info("produce progress", "topic", cfg.Topic, "sent", sent.Load(), "target", cfg.Count,
				"failed", failed.Load(), "rate_per_s", int(float64(sent.Load())/el.Seconds()))
		default:
		}
		if cfg.Rate > 0 {
			due := begin.Add(time.Duration(float64(produced) / cfg.Rate * float64(time.Second)))
			if wait := time.Until(due); wait > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(wait):
				}
				continue
			}
		}
		recs := next(sim(time.Now()))
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			cl.Produce(ctx, &kgo.Record{Topic: cfg.Topic, Key: []byte(r.Key), Value: r.Value, Timestamp: r.Time}, done)
			produced++
		}
	}
	if err := cl.Flush(context.WithoutCancel(ctx)); err != nil {
		return Stats{}, fmt.Errorf("loadgen: flush: %w", err)
	}
	st := Stats{Sent: sent.Load(), Failed: failed.Load(), Elapsed: time.Since(begin)}
	log.Info("produce done", "topic", cfg.Topic, "sent", st.Sent, "failed", st.Failed, "elapsed", st.Elapsed.Round(time.Millisecond))
	if firstErr != nil {
		return st, fmt.Errorf("loadgen: %d records failed, first: %w", st.Failed, firstErr)
	}
	return st, nil
}
