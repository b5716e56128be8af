package scores

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cespare/xxhash/v2"
	"github.com/lovoo/goka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankstream/rankstream/internal/board"
	"github.com/rankstream/rankstream/internal/kafka"
	"github.com/rankstream/rankstream/internal/obs"
	"github.com/rankstream/rankstream/topics"
)

// Group is the processor group's logical name; its table holds one State per member.
const Group = topics.ScoresGroup

// Sink stores members' board entries. Submit is called once per consumed record, in offset
// order per partition: with the entries a valid op left (every period it names, a duplicate's
// too), or nil after a record that went to the dead-letter topic. Every update is absolute. done
// must be called once the updates (and every update submitted before them) are durably stored,
// so that the record's offset may be committed; the sink may block Submit to push back.
type Sink interface {
	Submit(us []board.ScoreUpdate, done func(error))
}

// Config is what the processor needs besides Kafka.
type Config struct {
	Names topics.Names
	Rules topics.ScoreRules
	// Boards are the declared boards (the boards file); an op naming another board is
	// dead-lettered.
	Boards []*board.Board
	Sink   Sink
	Log    *slog.Logger
}

type processor struct {
	Config
	boards   map[string]*board.Board
	dlq      goka.Stream
	in       prometheus.Counter
	outcomes [2]prometheus.Counter // by Outcome
}

// Graph returns the processor's group graph.
func Graph(cfg Config) *goka.GroupGraph { return newProcessor(cfg).graph() }

func newProcessor(cfg Config) *processor {
	topic := string(topics.ScoresUpdated)
	p := &processor{Config: cfg, boards: make(map[string]*board.Board, len(cfg.Boards)),
		dlq: cfg.Names.Stream(topics.DLQ), in: obs.EventsIn.WithLabelValues(topic)}
	for _, b := range cfg.Boards {
		p.boards[b.Name] = b
	}
	for _, o := range []Outcome{Applied, Duplicate} {
		p.outcomes[o] = obs.EventsOutcome.WithLabelValues(topic, o.String())
	}
	return p
}

func (p *processor) graph() *goka.GroupGraph {
	cfg := p.Config
	return goka.DefineGroup(cfg.Names.Group(Group),
		goka.Input(cfg.Names.Stream(topics.ScoresUpdated), topics.Raw{}, p.process),
		goka.Persist(topics.Binary[State, *State]{}),
		goka.Output(p.dlq, topics.Raw{}),
	)
}

// Run runs the processor until ctx is cancelled or it fails. opts carry the Kafka set-up
// (kafka.Config.ProcessorOptions) or, in tests, goka.WithTester.
func Run(ctx context.Context, cfg Config, brokers []string, opts ...goka.ProcessorOption) error {
	proc, err := goka.NewProcessor(brokers, Graph(cfg), opts...)
	if err != nil {
		return fmt.Errorf("scores processor: %w", err)
	}
	if err := kafka.Run(ctx, proc, cfg.Names.Group(Group), cfg.Log); err != nil {
		return fmt.Errorf("scores processor: %w", err)
	}
	return nil
}

var kinds = map[string]Kind{topics.OpSet: Set, topics.OpIncr: Incr, topics.OpDelete: Delete}

// process decodes, applies and hands over one record. Every valid record, a duplicate
// included, hands its entries to the sink: the table may hold an op whose store write never
// happened (a crash between the two), and its redelivery must write it. The steps processor
// skips what it handed already since it took the partition; an op here names up to six
// periods times their scopes, so the same skip would cost a comparison of all of them for
// a write that the sink coalesces anyway.
func (p *processor) process(ctx goka.Context, msg any) {
	p.in.Inc()
	done := ctx.DeferCommit()
	value, _ := msg.([]byte)
	fail := func(err error) {
		kafka.DeadLetter(ctx, p.dlq, value, err)
		p.Sink.Submit(nil, done)
	}
	rec := ctx.Timestamp()
	o, err := topics.DecodeScoreOp(ctx.Key(), value, rec, p.Rules)
	if err != nil {
		fail(err)
		return
	}
	b, err := topics.ScoreOpBoard(o, p.boards, rec)
	if err != nil {
		fail(err)
		return
	}
	s := state(ctx)
	res, err := s.Apply(b, Op{RequestHash: xxhash.Sum64String(o.RequestID), Member: o.Member, Kind: kinds[o.Op],
		Score: o.Score, TSMs: o.TS.Millis(), Scope: o.Scope}, rec.UnixMilli(), p.Rules.FutureSkew)
	if res.Changed { // a refused op may have changed the state too: its request id, pruning
		ctx.SetValue(s)
	}
	if err != nil {
		fail(err)
		return
	}
	p.outcomes[res.Outcome].Inc()
	p.Sink.Submit(res.Updates, done)
}

// state returns the member's table value, or a new one.
func state(ctx goka.Context) *State {
	if s, ok := ctx.Value().(*State); ok {
		return s
	}
	return new(State)
}
