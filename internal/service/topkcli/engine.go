package topkcli

import (
	"fmt"
	"strings"
	"time"

	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/sketch/exact"
	"github.com/rankstream/rankstream/topics"
)

// engine counts items over the sliding window: the sketch, or exact counts.
// Both follow the sketch's rules: advance moves the window's end to the
// watermark rounded down to the slide; events at or after the end wait for
// the windows to come.
type engine interface {
	add(item string, t time.Time)
	advance(watermark time.Time)
	top(dst []sketch.Item) []sketch.Item
	bounds() (start, end time.Time)
	// empty reports that no event is in the window or ahead of it.
	empty() bool
}

func newEngine(cfg Config) (engine, error) {
	if cfg.Exact {
		// The window and slide the sketch accepts, so that --exact checks what
		// the sketch can run; k is unbounded here.
		if _, err := sketch.New(sketch.WithWindow(cfg.Window), sketch.WithSlide(cfg.Slide)); err != nil {
			return nil, err
		}
		if cfg.K < 1 {
			return nil, fmt.Errorf("k %d: want at least 1", cfg.K)
		}
		c, err := exact.New(cfg.Window, cfg.Slide)
		if err != nil {
			return nil, err
		}
		return &exactEngine{c: c, k: cfg.K}, nil
	}
	w, err := sketch.New(
		sketch.WithWindow(cfg.Window),
		sketch.WithSlide(cfg.Slide),
		sketch.WithK(cfg.K),
		sketch.WithWidth(cfg.Width),
		sketch.WithDepth(cfg.Depth),
		sketch.WithCandidates(cfg.Candidates),
	)
	if err != nil {
		return nil, err
	}
	return &approx{w: w}, nil
}

// approx is the pipeline's engine.
type approx struct{ w *sketch.Window }

func (a *approx) add(item string, t time.Time)        { a.w.Add(item, t) }
func (a *approx) advance(t time.Time)                 { a.w.Advance(t) }
func (a *approx) top(dst []sketch.Item) []sketch.Item { return a.w.AppendTopK(dst) }
func (a *approx) bounds() (time.Time, time.Time)      { return a.w.Bounds() }
func (a *approx) empty() bool                         { s := a.w.Stats(); return s.Events+s.Pending == 0 }

// exactEngine counts exactly (package sketch/exact): memory grows with the
// distinct items, and every error is 0.
type exactEngine struct {
	c *exact.Counter
	k int
}

func (e *exactEngine) add(item string, t time.Time)   { e.c.Add(item, t) }
func (e *exactEngine) advance(t time.Time)            { e.c.Advance(t) }
func (e *exactEngine) bounds() (time.Time, time.Time) { return e.c.Bounds() }
func (e *exactEngine) empty() bool                    { s := e.c.Stats(); return s.Events+s.Pending == 0 }

func (e *exactEngine) top(dst []sketch.Item) []sketch.Item {
	for _, it := range e.c.Top(e.k) {
		dst = append(dst, sketch.Item{Item: it.Item, Count: it.Count})
	}
	return dst
}

// parseLine splits "<time>\t<item>" and normalises the item.
func parseLine(s string) (time.Time, string, error) {
	ts, raw, ok := strings.Cut(s, "\t")
	if !ok {
		return time.Time{}, "", fmt.Errorf("no tab between time and item")
	}
	t, err := parseTime(ts)
	if err != nil {
		return time.Time{}, "", err
	}
	item := topics.Normalize(raw)
	if item == "" {
		return time.Time{}, "", fmt.Errorf("empty item")
	}
	return t, item, nil
}

// parseTime reads RFC 3339 with an offset or integer epoch milliseconds, as
// the event contract allows, within the years 1970 to 2200.
func parseTime(s string) (time.Time, error) {
	t, err := topics.ParseTime(s)
	if err != nil {
		return time.Time{}, err
	}
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, fmt.Errorf("time %q outside %d to %d", s, minTime.Year(), maxTime.Year())
	}
	return t, nil
}

var (
	minTime = time.Unix(0, 0)
	maxTime = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)
