package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/rankstream/rankstream/internal/service/replay"
)

func runReplay(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("replay", "Moves a group's committed offsets back so that its processors, started again, reprocess the retained input\n"+
		"(and clears the state the group must rebuild). Refuses while the group has live members: stop its processors first.\n"+
		"Prints the plan (per partition: committed offset -> new offset, records to reprocess); with --follow, shows the\n"+
		"progress of the processors until they caught up with the ends seen at start.")
	fs.SetOutput(stderr)
	var kf kafkaFlags
	kf.registerClient(fs)
	var lf logFlags
	lf.register(fs)
	cfg := replay.Config{}
	fs.StringVar(&cfg.Group, "group", "", "the group to replay: "+strings.Join(replay.Groups(), ", ")+" (hot: the groups hot and hot-merge)")
	toStart := fs.Bool("to-start", false, "replay from the start of the retained input")
	toTime := fs.String("to-time", "", "replay from the first record at or after this `time` (RFC 3339, e.g. 2026-11-30T00:00:00Z)")
	var offsets offsetFlag
	fs.Var(&offsets, "to-offset", "replay partition P from offset O (`P:O`); repeat for several partitions; the others keep their offsets")
	fs.BoolVar(&cfg.DryRun, "dry-run", false, "print the plan, change nothing")
	fs.BoolVar(&cfg.Follow, "follow", false, "after moving the offsets, show the progress until the processors caught up (a bar with rate and ETA on a terminal, log lines otherwise)")
	log, err := lf.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	targets := 0
	for _, given := range []bool{*toStart, *toTime != "", len(offsets) > 0} {
		if given {
			targets++
		}
	}
	switch {
	case cfg.Group == "":
		fmt.Fprintln(stderr, "rankstream replay: --group is required (rankstream replay --help)")
		return exitCode(errUsage, stderr)
	case targets != 1:
		fmt.Fprintln(stderr, "rankstream replay: give exactly one of --to-start, --to-time, --to-offset")
		return exitCode(errUsage, stderr)
	case cfg.DryRun && cfg.Follow:
		fmt.Fprintln(stderr, "rankstream replay: --follow follows a replay; a --dry-run moves nothing")
		return exitCode(errUsage, stderr)
	}
	if *toTime != "" {
		if cfg.Target.Time, err = time.Parse(time.RFC3339, *toTime); err != nil {
			fmt.Fprintf(stderr, "rankstream replay: --to-time: %v\n", err)
			return exitCode(errUsage, stderr)
		}
	}
	if len(offsets) > 0 {
		cfg.Target.Offsets = offsets
	}
	cfg.Kafka = kf.config("")
	cfg.Terminal = isTerminal(stdout)
	return exitCode(replay.Run(ctx, cfg, stdout, log), stderr)
}

// offsetFlag collects --to-offset P:O values.
type offsetFlag map[int32]int64

func (o *offsetFlag) String() string { return fmt.Sprint(map[int32]int64(*o)) }

func (o *offsetFlag) Set(v string) error {
	ps, offs, ok := strings.Cut(v, ":")
	p, perr := strconv.ParseInt(ps, 10, 32)
	off, oerr := strconv.ParseInt(offs, 10, 64)
	if !ok || perr != nil || oerr != nil || p < 0 || off < 0 {
		return fmt.Errorf("%q: want PARTITION:OFFSET, both non-negative integers", v)
	}
	if *o == nil {
		*o = offsetFlag{}
	}
	if _, dup := (*o)[int32(p)]; dup {
		return fmt.Errorf("partition %d given twice", p)
	}
	(*o)[int32(p)] = off
	return nil
}

// isTerminal tells whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
