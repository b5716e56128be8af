package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/internal/platform/backoff"
	"github.com/rankstream/rankstream/internal/platform/obs"
)

// Backoff bounds of Supervisor restarts: the first restart waits about MinRestartDelay, each
// one after a failed attempt twice as long, up to about MaxRestartDelay (restartBackoff). An
// attempt that ran healthy for a StableAfter starts the next series from MinRestartDelay again.
const (
	MinRestartDelay = time.Second
	MaxRestartDelay = 30 * time.Second
	StableAfter     = time.Minute
)

// ErrPermanent marks an error that restarting cannot heal; Supervisor.Run returns it instead of
// restarting. Wrap it: fmt.Errorf("...: %w: %w", ErrPermanent, err).
var ErrPermanent = errors.New("permanent")

// ErrUnwritten marks a unit that stopped with records its sink could not store (they stay
// uncommitted). Supervisor.Run returns it even when its context ended, so that a shutdown that
// could not write ends the process with a failure, never as a clean stop.
var ErrUnwritten = errors.New("stopped with records not stored")

// Permanent reports whether err cannot heal by restarting: ErrPermanent, a topic that does not
// match its spec (ErrTopicMismatch), and goka's topic errors, which it does not
// export as values: a topic it may not create that is missing (it was deleted: EnsureTopics
// created every topic at start), or topics of a group that are not co-partitioned. Everything
// else (a broker gone, a leader moving, a store that failed) is restarted.
func Permanent(err error) bool {
	if errors.Is(err, ErrPermanent) || errors.Is(err, ErrTopicMismatch) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "configured with NoCreate") || // goka: topicNoCreateError
		strings.Contains(msg, "topics are not copartitioned") ||
		strings.Contains(msg, "has partition gap")
}

// Supervisor runs the units of a process (a goka processor and what belongs to it, e.g. its
// sink) and restarts one that fails, with exponential backoff, until its context ends: goka
// gives up on a broker that is gone for a few seconds ("error consuming from group consumer"),
// and the process must outlive a broker restart or a leader move. Ready tells whether every
// unit runs. Restarts are logged and counted (rankstream_processor_restarts_total{unit});
// rankstream_processor_up{unit} is 1 while a unit runs.
type Supervisor struct {
	log   *slog.Logger
	ping  func(context.Context) error // nil: no probe of the brokers
	mu    sync.Mutex
	units []*unit
}

// NewSupervisor returns a supervisor logging to log. ping, when not nil, tells whether the
// brokers answer: a unit that failed while they did not is restarted as soon as they answer
// again (asked every MinRestartDelay), not after the rest of its backoff. The backoff spaces out
// restarts that fail at once or that would join the group over and over; an attempt against
// brokers that are down does neither, and the one after they are back ends the outage.
func NewSupervisor(log *slog.Logger, ping func(context.Context) error) *Supervisor {
	return &Supervisor{log: log, ping: ping}
}

// unit is one supervised unit and the goka processors it runs right now.
type unit struct {
	name    string
	mu      sync.Mutex
	up      bool // an attempt is running
	running bool // the attempt said it runs without a goka processor (Up)
	procs   []*goka.Processor
	last    error // the error of the last failed attempt
}

type unitKey struct{}

// unitOf returns the unit of ctx, if a Supervisor runs it.
func unitOf(ctx context.Context) *unit {
	u, _ := ctx.Value(unitKey{}).(*unit)
	return u
}

func (u *unit) attach(p *goka.Processor) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.procs = append(u.procs, p)
}

func (u *unit) detach(p *goka.Processor) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.procs = slices.DeleteFunc(u.procs, func(q *goka.Processor) bool { return q == p })
}

// ready returns nil when the unit runs and each of its processors is in goka's running state
// (its partitions assigned and set up).
func (u *unit) ready() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.up {
		if u.last != nil {
			return fmt.Errorf("%s: restarting after: %w", u.name, u.last)
		}
		return fmt.Errorf("%s: starting", u.name)
	}
	if len(u.procs) == 0 && !u.running {
		return fmt.Errorf("%s: starting", u.name)
	}
	for _, p := range u.procs {
		if !p.StateReader().IsState(goka.ProcStateRunning) {
			return fmt.Errorf("%s: processor not running yet (rebalance or recovery)", u.name)
		}
	}
	return nil
}

// Up tells the Supervisor running ctx's unit that the unit runs, for a unit without a goka
// processor (Run tells it for those): it is ready until it returns.
func Up(ctx context.Context) {
	if u := unitOf(ctx); u != nil {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.running = true
	}
}

func (u *unit) set(up bool, err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.up, u.running = up, false
	if err != nil {
		u.last = err
	}
}

// Run runs run under the name until ctx ends, and restarts it with backoff whenever it returns
// an error that is not Permanent (or returns nil while ctx has not ended). It returns nil once
// ctx ended (unless the last attempt's error is ErrUnwritten), or the permanent error.
// Processors that run calls through Run (this package's) count for Ready.
func (s *Supervisor) Run(ctx context.Context, name string, run func(context.Context) error) error {
	u := &unit{name: name}
	s.mu.Lock()
	s.units = append(s.units, u)
	s.mu.Unlock()
	log := s.log.With("unit", name)
	up := obs.ProcessorUp.WithLabelValues(name)
	restarts := obs.ProcessorRestarts.WithLabelValues(name)
	wait := restartBackoff()
	for attempt := 1; ; attempt++ {
		u.set(true, nil)
		up.Set(1)
		start := time.Now()
		err := run(context.WithValue(ctx, unitKey{}, u))
		up.Set(0)
		if ctx.Err() != nil {
			u.set(false, nil)
			if errors.Is(err, ErrUnwritten) {
				log.Error("unit stopped with records not stored: they stay uncommitted", "err", err)
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		}
		if err == nil {
			err = errors.New("stopped by itself")
		}
		u.set(false, err)
		if Permanent(err) {
			log.Error("unit failed and cannot heal by a restart: stopping", "err", err)
			return fmt.Errorf("%s: %w", name, err)
		}
		if time.Since(start) >= StableAfter {
			wait.Reset()
		}
		log.Warn("unit failed: restarting", "attempt", attempt, "ran", time.Since(start).Round(time.Millisecond),
			"restart_in", wait.Base(), "err", err)
		if !s.wait(ctx, wait) {
			return nil
		}
		restarts.Inc()
	}
}

// wait waits b's next delay before a restart, cut short once the brokers answer again if they
// did not when it began (ping). It returns false when ctx ended first.
func (s *Supervisor) wait(ctx context.Context, b *backoff.Backoff) bool {
	delay := time.NewTimer(b.Next())
	defer delay.Stop()
	var probe <-chan time.Time
	if s.ping != nil && !s.answers(ctx) {
		t := time.NewTicker(MinRestartDelay)
		defer t.Stop()
		probe = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-delay.C:
			return true
		case <-probe:
			if s.answers(ctx) {
				return true
			}
		}
	}
}

// answers tells whether the brokers answer ping within MinRestartDelay.
func (s *Supervisor) answers(ctx context.Context) bool {
	pctx, cancel := context.WithTimeout(ctx, MinRestartDelay)
	defer cancel()
	return s.ping(pctx) == nil
}

// restartBackoff is the backoff of restarts: from about MinRestartDelay, doubling up to about
// MaxRestartDelay.
func restartBackoff() *backoff.Backoff { return backoff.New(MinRestartDelay, MaxRestartDelay) }

// Ready returns nil when every unit runs with its processors in goka's running state, else why
// not.
func (s *Supervisor) Ready() error {
	s.mu.Lock()
	units := slices.Clone(s.units)
	s.mu.Unlock()
	if len(units) == 0 {
		return errors.New("no processor started yet")
	}
	var errs []error
	for _, u := range units {
		if err := u.ready(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
