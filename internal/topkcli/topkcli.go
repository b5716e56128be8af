// Package topkcli is the `rankstream topk` subcommand: the pipeline's
// heavy-hitters engine (package sketch) as an offline tool that reads timed
// items and writes the Top-K of every window step as JSON lines, with an
// exact mode for checking the sketch. It uses sketch and topics only; it must
// not import Kafka, goka processors, Redis or ClickHouse clients.
package topkcli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rankstream/rankstream/sketch"
)

// Exit statuses of Run.
const (
	ExitOK      = 0 // every line was used
	ExitSkipped = 1 // some lines were invalid and skipped, or the input could not be read to its end
	ExitUsage   = 2 // bad flags or arguments, or the input file cannot be opened
)

// maxLine is the longest input line accepted.
const maxLine = 1 << 20

const usage = `Usage: rankstream topk [flags] [file]

Reads lines "<time>\t<item>" from file (or standard input when it is absent or
"-"), in time order, and writes one JSON line per window step:

  {"window_start":"…","window_end":"…","items":[{"item":"…","count":N,"error":E}]}

Each line's time is RFC 3339 with an offset (2026-11-30T08:00:00+08:00) or
integer epoch milliseconds. Items are normalised as the pipeline does: trimmed,
case-folded, inner white space collapsed to one space. The time of each line is
the watermark: when it passes the end of a window, that window is written, with
its items by count descending (item ascending on ties). Each item's true count
in the window lies in [count − error, count]. At the end of the input the window
that holds the last line is written. Windows with no events are not written.

Invalid lines (no tab, a bad time, a time earlier than the line before, an
empty item) are reported on standard error with their line number and skipped.

Exit status: 0 if every line was used, 1 if any line was skipped or the input
could not be read to its end, 2 for a usage error.

Flags:
`

// config is the parsed command line.
type config struct {
	window, slide time.Duration
	k             int
	width, depth  int
	candidates    int
	final, exact  bool
	file          string
}

// Run executes `rankstream topk` with args (without the subcommand's name)
// and returns the exit status.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "rankstream topk: %v\n", err)
		return ExitUsage
	}
	eng, err := newEngine(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "rankstream topk: %v\n", err)
		return ExitUsage
	}
	in := stdin
	if cfg.file != "" && cfg.file != "-" {
		f, err := os.Open(cfg.file)
		if err != nil {
			fmt.Fprintf(stderr, "rankstream topk: %v\n", err)
			return ExitUsage
		}
		defer f.Close()
		in = f
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

func parseFlags(args []string, stdout, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("rankstream topk", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&cfg.window, "window", sketch.DefaultWindow, "length of the sliding window; a multiple of --slide")
	fs.DurationVar(&cfg.slide, "slide", sketch.DefaultSlide, "how far the window moves at each step; one output line per step")
	fs.IntVar(&cfg.k, "k", sketch.DefaultK, "number of items per window")
	fs.IntVar(&cfg.width, "width", sketch.DefaultWidth, "counters per row of the Count-Min Sketch (error about e/width × events in the window)")
	fs.IntVar(&cfg.depth, "depth", sketch.DefaultDepth, "rows of the Count-Min Sketch (bound holds with probability 1 − e^−depth)")
	fs.IntVar(&cfg.candidates, "candidates", sketch.DefaultCandidates, "items counted exactly besides the sketch; at least --k")
	fs.BoolVar(&cfg.final, "final", false, "write only the last window")
	fs.BoolVar(&cfg.exact, "exact", false, "count exactly with a hash map instead of the sketch (every error is 0), for checking")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return cfg, flag.ErrHelp
		}
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch fs.NArg() {
	case 0:
	case 1:
		cfg.file = fs.Arg(0)
	default:
		return cfg, fmt.Errorf("at most one input file, got %d arguments", fs.NArg())
	}
	return cfg, nil
}

// runner turns input lines into window steps.
type runner struct {
	cfg     config
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
		// The last window is the one that holds the last line.
		slide := int64(r.cfg.slide)
		end := time.Unix(0, (floorDiv(r.last.UnixNano(), slide)+1)*slide)
		if err := r.advance(end); err != nil {
			fmt.Fprintf(r.stderr, "rankstream topk: %v\n", err)
			return ExitSkipped
		}
		if r.cfg.final {
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
	for next := end.Add(r.cfg.slide); !next.After(t); next = next.Add(r.cfg.slide) {
		if r.eng.empty() {
			r.eng.advance(t)
			return nil
		}
		r.eng.advance(next)
		if r.cfg.final {
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
