// Package topkcli is the engine of the `rankstream topk` subcommand: the
// pipeline's heavy-hitters engine (package sketch) as an offline tool that
// reads timed items and writes the Top-K of every window step as JSON lines,
// with an exact mode (package sketch/exact) for checking the sketch. Its flags
// and environment are read by cmd/rankstream, as every command's are. It uses
// sketch, sketch/exact and topics only; it must not import Kafka, goka
// processors, Redis or ClickHouse clients.
package topkcli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/rankstream/rankstream/sketch"
)

// Exit statuses of Run.
const (
	ExitOK      = 0 // every line was used
	ExitSkipped = 1 // some lines were invalid and skipped, or the input could not be read to its end
	ExitUsage   = 2 // an invalid configuration (and, in `rankstream topk`, bad flags or arguments, or an input file that cannot be opened)
)

// maxLine is the longest input line accepted.
const maxLine = 1 << 20

// Config is what topk runs with; `rankstream topk` fills it from its flags
// and the RANKSTREAM_* environment.
type Config struct {
	Window, Slide time.Duration // the sliding window and its step
	K             int           // items per window
	Width, Depth  int           // the Count-Min Sketch's shape
	Candidates    int           // items counted exactly besides the sketch
	Final         bool          // write only the last window
	Exact         bool          // count exactly (package sketch/exact) instead of with the sketch
}

// DefaultConfig returns the sketch's defaults, writing every window.
func DefaultConfig() Config {
	return Config{
		Window: sketch.DefaultWindow, Slide: sketch.DefaultSlide, K: sketch.DefaultK,
		Width: sketch.DefaultWidth, Depth: sketch.DefaultDepth, Candidates: sketch.DefaultCandidates,
	}
}

// Run reads the lines "<time>\t<item>" of in, in time order, and writes one
// JSON line per window step to stdout, reporting invalid lines on stderr. It
// returns the exit status: ExitUsage if cfg is invalid.
func Run(ctx context.Context, cfg Config, in io.Reader, stdout, stderr io.Writer) int {
	eng, err := newEngine(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "rankstream topk: %v\n", err)
		return ExitUsage
	}
	out := bufio.NewWriter(stdout)
	r := &runner{cfg: cfg, eng: eng, out: out, stderr: stderr}
	status := r.run(ctx, in)
	if err := out.Flush(); err != nil {
		fmt.Fprintf(stderr, "rankstream topk: write output: %v\n", err)
		return ExitSkipped
	}
	return status
}

// runner turns input lines into window steps.
type runner struct {
	cfg     Config
	eng     engine
	out     *bufio.Writer
	stderr  io.Writer
	last    time.Time // time of the last valid line
	started bool
	skipped int
	buf     []sketch.Item
}

func (r *runner) run(ctx context.Context, in io.Reader) int {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	n := 0
	status := ExitOK
	for sc.Scan() {
		n++
		if n%4096 == 0 && ctx.Err() != nil {
			fmt.Fprintf(r.stderr, "rankstream topk: stopped at line %d: %v\n", n, ctx.Err())
			return ExitSkipped
		}
		t, item, err := parseLine(sc.Text())
		if err == nil && r.started && t.Before(r.last) {
			err = fmt.Errorf("time %s is before the previous line's %s", t.Format(time.RFC3339Nano), r.last.Format(time.RFC3339Nano))
		}
		if err != nil {
			fmt.Fprintf(r.stderr, "rankstream topk: line %d: %v; skipped\n", n, err)
			r.skipped++
			continue
		}
		if err := r.advance(t); err != nil {
			fmt.Fprintf(r.stderr, "rankstream topk: %v\n", err)
			return ExitSkipped
		}
		r.eng.add(item, t)
		r.last, r.started = t, true
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(r.stderr, "rankstream topk: line %d: %v\n", n+1, err)
		status = ExitSkipped
	}
	if r.started {
		// The last window is the one that holds the last line: a watermark one
		// slide after it, rounded down to the slide, ends it.
		if err := r.advance(r.last.Add(r.cfg.Slide)); err != nil {
			fmt.Fprintf(r.stderr, "rankstream topk: %v\n", err)
			return ExitSkipped
		}
		if r.cfg.Final {
			if err := r.write(); err != nil {
				fmt.Fprintf(r.stderr, "rankstream topk: %v\n", err)
				return ExitSkipped
			}
		}
	}
	if r.skipped > 0 {
		fmt.Fprintf(r.stderr, "rankstream topk: %d invalid lines skipped\n", r.skipped)
		status = ExitSkipped
	}
	return status
}

// advance moves the watermark to t, writing every window that closes on the
// way, one slide at a time, unless only the final window is wanted. Once the
// window holds nothing, it jumps.
func (r *runner) advance(t time.Time) error {
	if !r.started {
		r.eng.advance(t)
		return nil
	}
	_, end := r.eng.bounds()
	for next := end.Add(r.cfg.Slide); !next.After(t); next = next.Add(r.cfg.Slide) {
		if r.eng.empty() {
			r.eng.advance(t)
			return nil
		}
		r.eng.advance(next)
		if r.cfg.Final {
			continue
		}
		if err := r.write(); err != nil {
			return err
		}
	}
	return nil
}

// line is one JSON output line.
type line struct {
	WindowStart string `json:"window_start"`
	WindowEnd   string `json:"window_end"`
	Items       []item `json:"items"`
}

type item struct {
	Item  string `json:"item"`
	Count uint64 `json:"count"`
	Error uint64 `json:"error"`
}

// write writes the current window if it holds events.
func (r *runner) write() error {
	r.buf = r.eng.top(r.buf[:0])
	if len(r.buf) == 0 {
		return nil
	}
	start, end := r.eng.bounds()
	l := line{WindowStart: start.Format(time.RFC3339Nano), WindowEnd: end.Format(time.RFC3339Nano), Items: make([]item, len(r.buf))}
	for i, it := range r.buf {
		l.Items[i] = item{Item: it.Item, Count: it.Count, Error: it.Error}
	}
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("encode window ending %s: %w", l.WindowEnd, err)
	}
	r.out.Write(b)
	if err := r.out.WriteByte('\n'); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}
