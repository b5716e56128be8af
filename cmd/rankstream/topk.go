package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/rankstream/rankstream/internal/service/topkcli"
)

const topkSynopsis = `Reads lines "<time>\t<item>" from file (or standard input when it is absent or
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
could not be read to its end, 2 for a usage error.`

// runTopk reads topk's flags and environment into a topkcli.Config and runs it. Unlike the
// other commands it writes --help to standard output and exits 2 on bad flags, as it always
// has (its exit statuses are part of its contract).
func runTopk(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("topk", topkSynopsis, "[file]")
	fs.SetOutput(stderr)
	cfg := topkcli.DefaultConfig()
	fs.DurationVar(&cfg.Window, "window", cfg.Window, "length of the sliding window; a multiple of --slide")
	fs.DurationVar(&cfg.Slide, "slide", cfg.Slide, "how far the window moves at each step; one output line per step")
	fs.IntVar(&cfg.K, "k", cfg.K, "number of items per window")
	fs.IntVar(&cfg.Width, "width", cfg.Width, "counters per row of the Count-Min Sketch (error about e/width × events in the window)")
	fs.IntVar(&cfg.Depth, "depth", cfg.Depth, "rows of the Count-Min Sketch (bound holds with probability 1 − e^−depth)")
	fs.IntVar(&cfg.Candidates, "candidates", cfg.Candidates, "items counted exactly besides the sketch; at least --k")
	fs.BoolVar(&cfg.Final, "final", cfg.Final, "write only the last window")
	fs.BoolVar(&cfg.Exact, "exact", cfg.Exact, "count exactly (package sketch/exact) instead of with the sketch (every error is 0), for checking")
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return topkcli.ExitOK
		}
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "rankstream topk: %v\n", err)
		return topkcli.ExitUsage
	}
	if err := parse(fs, args); errors.Is(err, flag.ErrHelp) {
		return topkcli.ExitOK
	} else if err != nil {
		return fail(err)
	}
	in := stdin
	switch {
	case fs.NArg() > 1:
		return fail(fmt.Errorf("at most one input file, got %d arguments", fs.NArg()))
	case fs.NArg() == 1 && fs.Arg(0) != "-":
		f, err := os.Open(fs.Arg(0))
		if err != nil {
			return fail(err)
		}
		defer f.Close()
		in = f
	}
	return topkcli.Run(ctx, cfg, in, stdout, stderr)
}
