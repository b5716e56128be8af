package scores

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/lovoo/goka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// Group is the processor group's logical name; its table holds one State per member.
const Group = topics.ScoresGroup

// Sink stores members' board entries. Submit is called once per consumed record, in offset
// order per partition: with the entries a valid op left (every period it names, a duplicate's
// too, and an op refused as possibly forgotten: the entries as they are), or nil after any
// other record that went to the dead-letter topic. Every update is absolute. done
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
	boards          map[string]*board.Board
	dlq, quarantine goka.Stream
	in              prometheus.Counter
	outcomes        [2]prometheus.Counter // by Outcome
}

// Graph returns the processor's group graph.
func Graph(cfg Config) *goka.GroupGraph { return newProcessor(cfg).graph() }

func newProcessor(cfg Config) *processor {
	group, topic := string(cfg.Names.Group(Group)), string(cfg.Names.Stream(topics.ScoresUpdated))
	p := &processor{Config: cfg, boards: make(map[string]*board.Board, len(cfg.Boards)),
		dlq: cfg.Names.Stream(topics.DLQ), quarantine: cfg.Names.Stream(topics.ScoresQuarantine),
		in: obs.EventsIn(group, topic)}
	for _, b := range cfg.Boards {
		p.boards[b.Name] = b
	}
	for _, o := range []Outcome{Applied, Duplicate} {
		p.outcomes[o] = obs.EventsOutcome(group, topic, o.String())
	}
	return p
}

func (p *processor) graph() *goka.GroupGraph {
	cfg := p.Config
	return goka.DefineGroup(cfg.Names.Group(Group),
		goka.Input(cfg.Names.Stream(topics.ScoresUpdated), topics.Raw{}, p.process),
		goka.Persist(topics.Binary[State, *State]{}),
		goka.Output(p.dlq, topics.Raw{}),
		goka.Output(p.quarantine, topics.Raw{}),
	)
}

// Run runs the processor until ctx is cancelled or it fails. opts carry the Kafka set-up
// (kafka.Config.ProcessorOptions) or, in tests, goka.WithTester.
func Run(ctx context.Context, cfg Config, brokers []string, opts ...goka.ProcessorOption) error {
	return kafka.RunGraph(ctx, "scores processor", brokers, Graph(cfg), cfg.Log, opts...)
}

var kinds = map[string]Kind{topics.OpSet: Set, topics.OpIncr: Incr, topics.OpDelete: Delete,
	topics.OpBan: Ban, topics.OpUnban: Unban, topics.OpRelease: Release}

// process decodes, applies and hands over one record. Every valid record, a duplicate
// included, hands its entries to the sink: the table may hold an op whose store write never
// happened (a crash between the two), and its redelivery must write it. The steps processor
// skips what it handed already since it took the partition; an op here names up to six
// periods times their scopes, so the same skip would cost a comparison of all of them for
// a write that the sink coalesces anyway.
//
// A set or incr that breaks its board's fair play goes to the quarantine topic instead (the
// member is frozen there). An operator op (ban, unban, release) of board "*" applies to every
// declared board, in the boards file's order; each one applied is recorded in the quarantine
// topic, as the audit (its original bytes carry who and why, the reason header the op).
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
	targets := p.Boards
	if o.Board != topics.AllBoards {
		b, err := topics.ScoreOpBoard(o, p.boards, rec)
		if err != nil {
			fail(err)
			return
		}
		targets = []*board.Board{b}
	}
	s := state(ctx)
	op := Op{RequestHash: xxhash.Sum64String(o.RequestID), Member: o.Member, Kind: kinds[o.Op],
		Score: o.Score, TSMs: o.TS.Millis(), Scope: o.Scope}
	var (
		ups     []board.ScoreUpdate
		errs    []error
		changed bool
		applied []string // boards an operator op was applied to
	)
	for _, b := range targets {
		res, err := s.Apply(b, op, rec.UnixMilli(), p.Rules.FutureSkew)
		changed = changed || res.Changed // a refused op may have changed the state too: its request id, pruning
		if err != nil {
			if o.Board == topics.AllBoards {
				err = fmt.Errorf("board %q: %w", b.Name, err)
			}
			errs = append(errs, err)
			ups = append(ups, res.Updates...) // the entries as they are after ErrForgotten, else none
			continue
		}
		p.outcomes[res.Outcome].Inc()
		ups = append(ups, res.Updates...)
		if res.Outcome == Applied && op.Kind >= Ban {
			applied = append(applied, b.Name)
		}
	}
	if changed {
		ctx.SetValue(s)
	}
	if len(applied) > 0 {
		obs.OperatorOps.WithLabelValues(o.Op).Inc()
		kafka.SetAside(ctx, p.quarantine, value, fmt.Errorf("%s by %s on %s: %s", o.Op, o.By, strings.Join(applied, ","), o.Reason),
			slog.LevelInfo, "operator op recorded")
	}
	switch err := errors.Join(errs...); {
	case err == nil:
	case len(errs) == 1 && Quarantined(errs[0]):
		kafka.Quarantine(ctx, p.quarantine, value, rule(errs[0]), errs[0])
	default:
		kafka.DeadLetter(ctx, p.dlq, value, err)
	}
	p.Sink.Submit(ups, done)
}

// rule names the fair-play rule of a Quarantined error, for the metric.
func rule(err error) string {
	for _, r := range []error{ErrMaxIncr, ErrMaxRate, ErrFrozen} {
		if errors.Is(err, r) {
			return r.Error()
		}
	}
	return "other"
}

// state returns the member's table value, or a new one.
func state(ctx goka.Context) *State {
	if s, ok := ctx.Value().(*State); ok {
		return s
	}
	return new(State)
}
