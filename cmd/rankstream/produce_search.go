package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rankstream/rankstream/internal/service/loadgen"
	"github.com/rankstream/rankstream/topics"
)

// searchFlags shape a generated search stream.
type searchFlags struct {
	cfg              loadgen.SearchConfig
	trending         string
	peak, gap, width time.Duration
	share            float64
	file             string
	countGiven       bool
}

func (s *searchFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&s.cfg.Terms, "terms", 10_000, fmt.Sprintf("vocabulary size (at most %d); term popularity follows a Zipf law", loadgen.MaxTerms))
	fs.Float64Var(&s.cfg.Skew, "skew", 1.0, "Zipf exponent s > 0: the term of rank k is drawn with probability proportional to k^-s")
	fs.IntVar(&s.cfg.Users, "users", 10_000, "distinct users (records are keyed by user id)")
	fs.Float64Var(&s.cfg.VariantRatio, "variants", 0.2, "share of queries sent with a random raw spelling (upper case, extra white space) that normalises to the same term")
	fs.StringVar(&s.trending, "trending", "", `planted terms whose popularity rises and falls, comma-separated (e.g. "black friday,snow storm")`)
	fs.DurationVar(&s.peak, "trend-peak", 30*time.Minute, "when, after --start, the first planted term peaks")
	fs.DurationVar(&s.gap, "trend-gap", 20*time.Minute, "how long after the previous one each further planted term peaks")
	fs.DurationVar(&s.width, "trend-width", 15*time.Minute, "how long a planted term takes to rise from nothing to its peak, and to fall back")
	fs.Float64Var(&s.share, "trend-share", 0.05, "share of all queries a planted term makes at its peak")
	fs.StringVar(&s.file, "file", "", `replay "<time>\t<query>" lines from this file ("-" is standard input) instead of generating, every line unless --count is given; the time is RFC 3339 or epoch milliseconds and becomes the query's ts, the line number the record key`)
}

// check notes which flags were given and rejects generator flags beside --file.
func (s *searchFlags) check(fs *flag.FlagSet) error {
	var given []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "count":
			s.countGiven = true
		case "terms", "skew", "users", "variants", "trending", "trend-peak", "trend-gap", "trend-width", "trend-share":
			given = append(given, "--"+f.Name)
		}
	})
	if s.file != "" && len(given) > 0 {
		fmt.Fprintf(fs.Output(), "--file replays a file; %s only shape a generated stream\n", strings.Join(given, ", "))
		return errUsage
	}
	return nil
}

// trends plants the --trending terms, peaking one after the other from start + --trend-peak.
func (s *searchFlags) trends(start time.Time) []loadgen.Trend {
	var out []loadgen.Trend
	for _, term := range strings.Split(s.trending, ",") {
		if strings.TrimSpace(term) == "" {
			continue
		}
		peak := start.Add(s.peak + time.Duration(len(out))*s.gap)
		out = append(out, loadgen.Trend{Term: term, Peak: peak, Width: s.width, Share: s.share})
	}
	return out
}

func produceSearch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("produce search", "Generates search queries into search.queries: a vocabulary whose popularity follows a Zipf law\n"+
		"with the chosen skew, planted trending terms whose share rises and falls over event time, and\n"+
		"raw spellings that normalise to the same term. With --file it replays a \"<time>\\t<query>\" file\n"+
		"(the input format of `rankstream topk`) instead, sending every line by default.")
	fs.SetOutput(stderr)
	var pf produceFlags
	var sf searchFlags
	pf.register(fs)
	sf.register(fs)
	log, err := pf.parse(fs, args, stderr)
	if err == nil {
		err = sf.check(fs)
	}
	if err != nil {
		return exitCode(err, stderr)
	}
	if sf.file == "" {
		sf.cfg.Seed = pf.seed
		sf.cfg.Trends = sf.trends(pf.pc.Start)
		gen, err := loadgen.NewSearch(sf.cfg)
		if err != nil {
			return exitCode(err, stderr)
		}
		return exitCode(pf.produce(ctx, topics.SearchQueries, gen.Next, log, stdout), stderr)
	}
	in := stdin
	if sf.file != "-" {
		f, err := os.Open(sf.file)
		if err != nil {
			return exitCode(fmt.Errorf("--file: %w", err), stderr)
		}
		defer f.Close()
		in = f
	}
	if !sf.countGiven {
		pf.pc.Count = 0 // the whole file
	}
	replay := loadgen.NewReplay(in)
	err = pf.produce(ctx, topics.SearchQueries, replay.Next, log, stdout)
	if err == nil {
		err = replay.Err()
	}
	return exitCode(err, stderr)
}
