package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/loadgen"
	"github.com/rankstream/rankstream/topics"
)

func runProduce(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "steps" {
		fmt.Fprintln(stderr, "Usage: rankstream produce steps [flags]   (rankstream produce steps --help)")
		return 2
	}
	fs := newFlags("produce steps", "Generates realistic step reports into steps.reported: many users in several zones, duplicates (same request id), stale out-of-order readings, and optionally the surge of reports at each zone's local midnight.")
	fs.SetOutput(stderr)
	var kf kafkaFlags
	var lf logFlags
	kf.register(fs, true)
	lf.register(fs)
	var cfg loadgen.StepsConfig
	var pc loadgen.ProduceConfig
	zones := fs.String("zones", strings.Join(loadgen.DefaultZones, ","), "IANA zones of the users, comma-separated")
	fs.IntVar(&cfg.Users, "users", 20_000, "distinct users")
	fs.Float64Var(&cfg.DupRatio, "dup-ratio", 0.1, "share of reports re-sent unchanged (same request id)")
	fs.Float64Var(&cfg.StaleRatio, "stale-ratio", 0.1, "share of reports that are late, smaller readings")
	fs.BoolVar(&cfg.MidnightSurge, "midnight-surge", false, "when a zone passes local midnight, all its users report at once")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed (the same seed gives the same users and reports)")
	fs.IntVar(&pc.Count, "count", 100_000, "records to send; 0 sends until interrupted")
	fs.Float64Var(&pc.Rate, "rate", 0, "records per second; 0 is as fast as possible")
	start := fs.String("start", "", "simulated start time (RFC 3339); empty is now")
	fs.Float64Var(&pc.Speed, "speed", 1, "simulated seconds per real second (e.g. 3600 to cross midnights quickly)")
	log, err := lf.parse(fs, args[1:], stderr)
	if err != nil {
		return exitCode(err, stderr)
	}
	if *start != "" {
		if pc.Start, err = time.Parse(time.RFC3339, *start); err != nil {
			return exitCode(fmt.Errorf("--start: %w: %w", err, errUsage), stderr)
		}
	}
	cfg.Zones = strings.Split(*zones, ",")
	gen, err := loadgen.NewSteps(cfg)
	if err != nil {
		return exitCode(err, stderr)
	}
	kc := kf.config("")
	cl, err := kc.Client(kgo.ProducerLinger(5*time.Millisecond), kgo.MaxBufferedRecords(100_000))
	if err != nil {
		return exitCode(err, stderr)
	}
	defer cl.Close()
	pc.Topic = string(kc.Names.Stream(topics.StepsReported))
	st, err := loadgen.Produce(ctx, cl, pc, gen.Next, log)
	fmt.Fprintf(stdout, "sent %d records in %s (%d failed)\n", st.Sent, st.Elapsed.Round(time.Millisecond), st.Failed)
	return exitCode(err, stderr)
}
