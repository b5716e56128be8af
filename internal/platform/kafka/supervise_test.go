package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rankstream/rankstream/internal/platform/backoff"
	"github.com/rankstream/rankstream/internal/platform/obs"
)

func TestPermanent(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{errors.New("error consuming from group consumer: kafka: client has run out of available brokers"), false},
		{fmt.Errorf("steps pipeline: redis: %w", context.DeadlineExceeded), false},
		{fmt.Errorf("x: %w: bad flag", ErrPermanent), true},
		{fmt.Errorf("kafka: %w: steps.reported: 4 partitions, want 8", ErrTopicMismatch), true},
		{errors.New("hot merge: topic 'p.hot-merge-table' does not exist but the manager is configured with NoCreate, so it will not attempt to create it"), true},
		{errors.New("topics are not copartitioned! Topic 'x' does not have 8 partitions like the rest but 4"), true},
	} {
		if got := Permanent(tt.err); got != tt.want {
			t.Errorf("Permanent(%q) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestSupervisorRestartsWhenTheBrokersAnswerAgain: the wait before a restart, an hour long
// here, ends once the brokers answer again if they did not when it began; if they answered
// then, or never do, it lasts until its delay or the context's end.
func TestSupervisorRestartsWhenTheBrokersAnswerAgain(t *testing.T) {
	down := errors.New("connection refused")
	var pings atomic.Int32
	backAfter := func(n int32) func(context.Context) error {
		return func(context.Context) error {
			if pings.Add(1) <= n {
				return down
			}
			return nil
		}
	}
	log := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name string
		ping func(context.Context) error
		want bool // the wait ended before the context
	}{
		{"down, then back", backAfter(2), true},
		{"answering all along", backAfter(0), false},
		{"down all along", func(context.Context) error { return down }, false},
		{"no probe", nil, false},
	} {
		pings.Store(0)
		timeout := 2 * time.Second // what a wait that must not end early lasts
		if tc.want {
			timeout = time.Minute // the probe asks every MinRestartDelay
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		ok := NewSupervisor(log, tc.ping).wait(ctx, backoff.New(time.Hour, time.Hour))
		ended := ctx.Err() != nil
		cancel()
		if ok != tc.want || ended == tc.want {
			t.Errorf("%s: wait = %v with the context ended %v, want %v", tc.name, ok, ended, tc.want)
		}
	}
}

// TestSupervisorRestartsUntilPermanent: a unit that fails is restarted (counted), not ready
// meanwhile; a permanent error ends Run with that error.
func TestSupervisorRestartsUntilPermanent(t *testing.T) {
	sup := NewSupervisor(slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	restarts := obs.ProcessorRestarts.WithLabelValues("flaky")
	before := counterValue(restarts)
	calls := 0
	var notReady error
	start := time.Now()
	err := sup.Run(context.Background(), "flaky", func(context.Context) error {
		calls++
		notReady = sup.Ready() // no goka processor attached: not ready
		if calls < 3 {
			return errors.New("broker gone")
		}
		return fmt.Errorf("%w: config", ErrPermanent)
	})
	if !errors.Is(err, ErrPermanent) || calls != 3 {
		t.Fatalf("Run = %v after %d calls, want the permanent error after 3", err, calls)
	}
	if got := counterValue(restarts) - before; got != 2 {
		t.Errorf("restarts counted %v, want 2", got)
	}
	if notReady == nil || sup.Ready() == nil {
		t.Errorf("ready while starting (%v) or after failing (%v)", notReady, sup.Ready())
	}
	// Backoff: 0.5-1 s, then 1-2 s.
	if d := time.Since(start); d < 1500*time.Millisecond || d > 10*time.Second {
		t.Errorf("two restarts took %s, want 1.5 s to 3 s of backoff", d)
	}
}

// TestSupervisorStopsWithContext: Run returns nil once its context ends, also during a backoff.
func TestSupervisorStopsWithContext(t *testing.T) {
	sup := NewSupervisor(slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- sup.Run(ctx, "stopping", func(context.Context) error { return errors.New("fails") })
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run = %v, want nil after the context ended", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return within 5 s of the context's end")
	}
}

func counterValue(c prometheus.Counter) float64 {
	var m dto.Metric
	_ = c.Write(&m)
	return m.GetCounter().GetValue()
}

// A shutdown whose last attempt could not store its records is a failure, not a clean stop:
// the process must exit non-zero, so that its supervisor restarts it.
func TestSupervisorReportsUnwrittenAtShutdown(t *testing.T) {
	sup := NewSupervisor(slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- sup.Run(ctx, "steps", func(ctx context.Context) error {
			<-ctx.Done()
			return fmt.Errorf("sink: %w", ErrUnwritten)
		})
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, ErrUnwritten) {
			t.Fatalf("Run = %v, want ErrUnwritten after a shutdown that could not write", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return within 5 s of the context's end")
	}
}
