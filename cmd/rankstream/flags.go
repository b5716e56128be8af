package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/app"
	"github.com/rankstream/rankstream/processors/hot/merge"
	"github.com/rankstream/rankstream/processors/steps"
	"github.com/rankstream/rankstream/topics"
)

// newFlags returns a flag set whose --help says that every flag can also come from the
// environment as RANKSTREAM_<FLAG> (upper case, '-' as '_') and lists those variables;
// operands are the arguments the command takes after its flags, if any.
func newFlags(name, synopsis string, operands ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: rankstream %s\n\n%s\n\nFlags (each also read from the environment variable listed below; a flag on the command line wins):\n",
			strings.Join(append([]string{name, "[flags]"}, operands...), " "), synopsis)
		fs.PrintDefaults()
		fmt.Fprintf(w, "\nEnvironment (RANKSTREAM_<FLAG>, upper case, '-' as '_'):\n")
		fs.VisitAll(func(f *flag.Flag) { fmt.Fprintf(w, "  %-34s --%s\n", envName(f.Name), f.Name) })
	}
	return fs
}

// envName is the environment variable that sets flag name.
func envName(name string) string {
	return "RANKSTREAM_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// parse parses args after applying RANKSTREAM_* environment variables as defaults.
func parse(fs *flag.FlagSet, args []string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		env := envName(f.Name)
		if v, ok := os.LookupEnv(env); ok && err == nil {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s=%q: %w", env, v, serr)
			}
		}
	})
	if err != nil {
		return err
	}
	return fs.Parse(args)
}

// logFlags configures the slog logger.
type logFlags struct{ level, format string }

func (l *logFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&l.level, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&l.format, "log-format", "text", "log format: text or json")
}

// parse parses args (see parse) and returns the logger the flags ask for.
func (l *logFlags) parse(fs *flag.FlagSet, args []string, w io.Writer) (*slog.Logger, error) {
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	return l.logger(w)
}

func (l *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(l.level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch l.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", l.format)
}

// kafkaFlags are the flags of every command that talks to Kafka.
type kafkaFlags struct {
	brokers     string
	partitions  int
	replication int
	prefix      string
	clientID    string
}

func (k *kafkaFlags) register(fs *flag.FlagSet, withBrokers bool) {
	if withBrokers {
		fs.StringVar(&k.brokers, "brokers", "127.0.0.1:9092", "Kafka bootstrap brokers, comma-separated")
	}
	fs.IntVar(&k.partitions, "partitions", topics.DefaultPartitions, "partitions of every co-partitioned topic (inputs and group tables)")
	fs.IntVar(&k.replication, "replication", 1, "replication factor of the topics rankstream creates")
	k.registerNames(fs)
}

// registerClient registers the flags of a command that only produces to existing topics
// (the gateway): brokers, topic prefix and client id.
func (k *kafkaFlags) registerClient(fs *flag.FlagSet) {
	fs.StringVar(&k.brokers, "brokers", "127.0.0.1:9092", "Kafka bootstrap brokers, comma-separated")
	k.registerNames(fs)
}

func (k *kafkaFlags) registerNames(fs *flag.FlagSet) {
	fs.StringVar(&k.prefix, "topic-prefix", "", "prefix of every topic and group name, to share a cluster between deployments")
	fs.StringVar(&k.clientID, "client-id", "rankstream", "Kafka client id")
}

func (k *kafkaFlags) config(stateDir string) kafka.Config {
	return kafka.Config{
		Brokers:     strings.Split(k.brokers, ","),
		Partitions:  k.partitions,
		Replication: k.replication,
		ClientID:    k.clientID,
		Names:       topics.Names{Prefix: k.prefix},
		StateDir:    stateDir,
	}
}

// stepsFlags are the rules and sink settings of the steps processor.
type stepsFlags struct {
	rules      topics.StepRules
	limits     steps.Limits
	coalesce   time.Duration
	maxPending int
}

func (s *stepsFlags) register(fs *flag.FlagSet) {
	registerStepRules(fs, &s.rules)
	fs.Int64Var(&s.limits.MaxRisePerMinute, "max-steps-rate", 0, "most steps a user's day may rise per minute of event time (from local midnight, and since the day's value was reached); faster reports go to the topic steps.quarantine. 0: no limit; 250 is a brisk human walk (see docs/steps.md)")
	fs.DurationVar(&s.coalesce, "coalesce", 500*time.Millisecond, "how long Redis writes are coalesced per user and day (per member and period for score boards) before a pipelined flush")
	fs.IntVar(&s.maxPending, "max-pending", 20_000, "records waiting for a Redis flush before it starts at once and a processor (steps, scores) stops consuming until it did (backpressure while Redis is slow or down; each record waiting costs about 0.6 KB)")
}

// registerStepRules registers the rules a step report must pass: the processors dead-letter
// what breaks them, the gateway refuses it with 400, so both must be given the same values
// (the same RANKSTREAM_* variables).
func registerStepRules(fs *flag.FlagSet, r *topics.StepRules) {
	d := topics.DefaultStepRules
	fs.Int64Var(&r.MaxSteps, "max-steps", d.MaxSteps, "largest plausible daily step count; larger reports go to the dead-letter topic (the gateway refuses them)")
	fs.DurationVar(&r.Retention, "retention", d.Retention, "reports older than this before their record's timestamp go to the dead-letter topic (the gateway refuses them); also the TTL of Redis day keys")
	fs.DurationVar(&r.FutureSkew, "future-skew", d.FutureSkew, "step reports and score ops later than this after their record's timestamp go to the dead-letter topic (the gateway refuses them)")
}

// scoreRulesOf returns the score ops' rules: the default ones with the steps' --future-skew.
func scoreRulesOf(steps topics.StepRules) topics.ScoreRules {
	r := topics.DefaultScoreRules
	r.FutureSkew = steps.FutureSkew
	return r
}

// pipelineFlags are the flags of the commands that run processors.
type pipelineFlags struct {
	kafka  kafkaFlags
	steps  stepsFlags
	hot    hotFlags
	log    logFlags
	boards *string
}

// register registers the flags; boardsHelp is the help of --boards.
func (p *pipelineFlags) register(fs *flag.FlagSet, withBrokers bool, boardsHelp string) {
	p.kafka.register(fs, withBrokers)
	p.steps.register(fs)
	p.hot.register(fs)
	p.log.register(fs)
	p.boards = boardsFlag(fs, boardsHelp)
}

// boardsFlag registers --boards FILE.
func boardsFlag(fs *flag.FlagSet, help string) *string {
	return fs.String("boards", "", "the boards file (YAML) declaring the score boards; "+help)
}

// pipeline is the pipeline the flags describe, with the boards of --boards read and checked;
// its stores and logger are the command's.
func (p *pipelineFlags) pipeline(stateDir string) (app.Pipeline, error) {
	boards, err := app.LoadBoards(*p.boards)
	if err != nil {
		return app.Pipeline{}, err
	}
	scoreRules := scoreRulesOf(p.steps.rules)
	friendRules := topics.DefaultFriendRules
	friendRules.FutureSkew = p.steps.rules.FutureSkew
	return app.Pipeline{
		Kafka: p.kafka.config(stateDir),
		Steps: app.StepsConfig{Rules: p.steps.rules, Limits: p.steps.limits, Coalesce: p.steps.coalesce, MaxPending: p.steps.maxPending},
		Scores: app.ScoresConfig{Boards: boards, Rules: scoreRules, Coalesce: p.steps.coalesce,
			MaxPending: p.steps.maxPending},
		Friends: app.FriendsConfig{Rules: friendRules, Coalesce: p.steps.coalesce, MaxPending: p.steps.maxPending},
		Hot:     p.hot.cfg,
		Merge:   merge.Config{K: p.hot.cfg.K, MergeWait: p.hot.mergeWait},
	}, nil
}
