package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/lovoo/goka"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/service/loadgen"
	"github.com/rankstream/rankstream/topics"
)

const produceUsage = "Usage: rankstream produce steps|scores|search [flags]   (rankstream produce <kind> --help)"

func runProduce(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "steps":
			return produceSteps(ctx, args[1:], stdout, stderr)
		case "scores":
			return produceScores(ctx, args[1:], stdout, stderr)
		case "search":
			return produceSearch(ctx, args[1:], stdin, stdout, stderr)
		}
	}
	fmt.Fprintln(stderr, produceUsage)
	return 2
}

func produceSteps(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("produce steps", "Generates realistic step reports into steps.reported: many users in several zones, duplicates (same request id), stale out-of-order readings, and optionally the surge of reports at each zone's local midnight.")
	fs.SetOutput(stderr)
	var pf produceFlags
	pf.register(fs)
	var cfg loadgen.StepsConfig
	zones := fs.String("zones", strings.Join(loadgen.DefaultZones, ","), "IANA zones of the users, comma-separated")
	fs.IntVar(&cfg.Users, "users", 20_000, "distinct users")
	fs.Float64Var(&cfg.DupRatio, "dup-ratio", 0.1, "share of reports re-sent unchanged (same request id)")
	fs.Float64Var(&cfg.StaleRatio, "stale-ratio", 0.1, "share of reports that are late, smaller readings")
	fs.BoolVar(&cfg.MidnightSurge, "midnight-surge", false, "when a zone passes local midnight, all its users report at once")
	log, err := pf.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	cfg.Zones = strings.Split(*zones, ",")
	cfg.Seed = pf.seed
	gen, err := loadgen.NewSteps(cfg)
	if err != nil {
		return exitCode(err, stderr)
	}
	return exitCode(pf.produce(ctx, topics.StepsReported, gen.Next, log, stdout), stderr)
}

func produceScores(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("produce scores", "Generates score ops into scores.updated: members of several scopes on the given boards, incr ops (points won, a tenth of them lost) or set ops (a running score reported whole), and duplicates (same request id). The boards must be declared in the boards file of `process` (rankstream dev declares arena and highscore).")
	fs.SetOutput(stderr)
	var pf produceFlags
	pf.register(fs)
	var cfg loadgen.ScoresConfig
	boardOps := fs.String("board-ops", "arena:incr,highscore:set", "boards and the op each gets, comma-separated <board>:incr|set")
	scopes := fs.String("scopes", strings.Join(loadgen.DefaultRegions, ","), "scopes of the members (each member keeps one), comma-separated")
	fs.IntVar(&cfg.Members, "members", 10_000, "distinct members")
	fs.Float64Var(&cfg.DupRatio, "dup-ratio", 0.05, "share of ops re-sent unchanged (same request id)")
	log, err := pf.parse(fs, args, stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	for _, bo := range strings.Split(*boardOps, ",") {
		name, op, _ := strings.Cut(strings.TrimSpace(bo), ":")
		cfg.Boards = append(cfg.Boards, loadgen.ScoreBoardLoad{Board: name, Op: op})
	}
	cfg.Scopes = strings.Split(*scopes, ",")
	cfg.Seed = pf.seed
	gen, err := loadgen.NewScores(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "--board-ops %q: %v\n", *boardOps, err)
		return exitCode(errUsage, stderr)
	}
	return exitCode(pf.produce(ctx, topics.ScoresUpdated, gen.Next, log, stdout), stderr)
}

// produceFlags are the flags of every produce kind: Kafka, logging, how much and how fast,
// the simulated clock and the seed.
type produceFlags struct {
	kafka kafkaFlags
	log   logFlags
	pc    loadgen.ProduceConfig
	start string
	seed  uint64
}

func (p *produceFlags) register(fs *flag.FlagSet) {
	p.kafka.register(fs, true)
	p.log.register(fs)
	fs.Uint64Var(&p.seed, "seed", 1, "random seed (the same seed gives the same stream for the same simulated instants)")
	fs.IntVar(&p.pc.Count, "count", 100_000, "records to send; 0 sends until interrupted")
	fs.Float64Var(&p.pc.Rate, "rate", 0, "records per second; 0 is as fast as possible")
	fs.StringVar(&p.start, "start", "", "simulated start time (RFC 3339); empty is now")
	fs.Float64Var(&p.pc.Speed, "speed", 1, "simulated seconds per real second (e.g. 3600 to cross midnights quickly)")
}

// parse parses args and resolves --start (now when empty), so generators can place events
// relative to it.
func (p *produceFlags) parse(fs *flag.FlagSet, args []string, stderr io.Writer) (*slog.Logger, error) {
	log, err := p.log.parse(fs, args, stderr)
	if err != nil {
		return nil, err
	}
	p.pc.Start = time.Now()
	if p.start != "" {
		if p.pc.Start, err = time.Parse(time.RFC3339, p.start); err != nil {
			fmt.Fprintf(fs.Output(), "invalid value %q for flag -start: want RFC 3339\n", p.start)
			return nil, fmt.Errorf("--start: %w: %w", err, errUsage)
		}
	}
	return log, nil
}

// produce sends next's records to the stream (named with --topic-prefix) and prints what it
// sent.
func (p *produceFlags) produce(ctx context.Context, stream goka.Stream, next func(time.Time) []loadgen.Record, log *slog.Logger, stdout io.Writer) error {
	kc := p.kafka.config("")
	cl, err := kc.KgoClient(kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(100_000))
	if err != nil {
		return err
	}
	defer cl.Close()
	p.pc.Topic = string(kc.Names.Stream(stream))
	st, err := loadgen.Produce(ctx, cl, p.pc, next, log)
	fmt.Fprintf(stdout, "sent %d records in %s (%d failed)\n", st.Sent, st.Elapsed.Round(time.Millisecond), st.Failed)
	return err
}
