// Package steps is the goka processor of daily step reports: it keeps each user's merged
// per-day state in the group table (restored from its changelog after a crash or rebalance)
// and hands every day's merged value to a Sink, which commits the record once the value is
// stored. RunHistory (group steps-history) writes the daily steps history from the group's
// table to a HistoryStore.
//
// It imports topics, internal plumbing (board, kafka, obs) and franz-go's records; never a
// sink, a Redis client or another processor family.
package steps

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/lovoo/goka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// Group is the processor group's logical name; its table holds one State per user.
const Group = topics.StepsGroup

// Sink stores merged day values. Submit is called once per consumed record, in offset order
// per partition: with the user's merged day after a valid report, or nil after a record that
// went to the dead-letter topic. done must be called once the update (and every update
// submitted before it) is durably stored, so that the record's offset may be committed; the
// sink may block Submit to push back.
type Sink interface {
	Submit(u *board.StepUpdate, done func(error))
}

// Config is what the processor needs besides Kafka.
type Config struct {
	Names topics.Names
	Rules topics.StepRules
	// Limits are the rules that depend on the user's state (the rise per minute): a report
	// breaking them goes to the quarantine topic.
	Limits Limits
	Sink   Sink
	Log    *slog.Logger
}

type processor struct {
	Config
	dlq      goka.Stream
	quarant  goka.Stream
	claims   *claims // the partitions' claims, which the days' states name when handed
	in       prometheus.Counter
	skipped  prometheus.Counter
	outcomes [3]prometheus.Counter // by Outcome
}

// Graph returns the processor's group graph.
func Graph(cfg Config) *goka.GroupGraph { return newProcessor(cfg).graph() }

func newProcessor(cfg Config) *processor {
	group, topic := string(cfg.Names.Group(Group)), string(cfg.Names.Stream(topics.StepsReported))
	p := &processor{Config: cfg, dlq: cfg.Names.Stream(topics.DLQ), quarant: cfg.Names.Stream(topics.StepsQuarantine), claims: new(claims),
		in: obs.EventsIn(group, topic), skipped: obs.StepsWritesSkipped}
	for _, o := range []Outcome{Improved, Duplicate, Stale} {
		p.outcomes[o] = obs.EventsOutcome(group, topic, o.String())
	}
	return p
}

func (p *processor) graph() *goka.GroupGraph {
	cfg := p.Config
	return goka.DefineGroup(cfg.Names.Group(Group),
		goka.Input(cfg.Names.Stream(topics.StepsReported), topics.Raw{}, p.process),
		goka.Persist(stateCodec{}),
		goka.Output(p.dlq, topics.Raw{}),
		goka.Output(p.quarant, topics.Raw{}),
	)
}

// Run runs the processor until ctx is cancelled or it fails. opts carry the Kafka set-up
// (kafka.Config.ProcessorOptions) or, in tests, goka.WithTester.
func Run(ctx context.Context, cfg Config, brokers []string, opts ...goka.ProcessorOption) error {
	p := newProcessor(cfg)
	opts = append(slices.Clip(opts), goka.WithRebalanceCallback(func(goka.Assignment) { p.claims.rebalanced() }))
	return kafka.RunGraph(ctx, "steps processor", brokers, p.graph(), cfg.Log, opts...)
}

func (p *processor) process(ctx goka.Context, msg any) {
	p.in.Inc()
	done := ctx.DeferCommit()
	value, _ := msg.([]byte)
	r, loc, err := topics.DecodeStepReport(ctx.Key(), value, ctx.Timestamp(), p.Rules)
	if err != nil {
		kafka.DeadLetter(ctx, p.dlq, value, err)
		p.Sink.Submit(nil, done)
		return
	}
	s := state(ctx)
	oldest := board.DayOf(ctx.Timestamp().Add(-p.Rules.Retention-48*time.Hour), time.UTC)
	rep := Report{
		RequestHash: xxhash.Sum64String(r.RequestID),
		Day:         board.DayOf(r.TS.Time, loc),
		Steps:       r.Steps,
		TSMs:        r.TS.Millis(),
		Region:      regionName(r.Region), // r's strings share value's memory; the state keeps its region
	}
	var dayStart int64
	if p.Limits.MaxRisePerMinute > 0 {
		dayStart = board.FirstLocalInstant(rep.Day, loc).UnixMilli()
	}
	res, err := s.ApplyWithin(rep, oldest, p.Limits, dayStart)
	if err != nil {
		release(s)
		if errors.Is(err, ErrTooFast) {
			kafka.Quarantine(ctx, p.quarant, value, ErrTooFast.Error(), err)
		} else {
			kafka.DeadLetter(ctx, p.dlq, value, err)
		}
		p.Sink.Submit(nil, done)
		return
	}
	p.outcomes[res.Outcome].Inc()
	// A valid record hands its day's whole effect (value, region and the regions left) to the
	// sink, improved or not, unless it left the effect as this processor handed it in its
	// current claim of the partition (claims): after a crash or a rebalance the table may
	// already hold a change whose store write never happened, and the first record of the
	// day must still write it. The user is the record's key (equal to r.UserID, which shares
	// its memory with the whole value).
	newClaim := s.MarkHanded(res.Day.Day, p.claims.of(ctx.Partition()))
	// Write back whatever changed, a stale report's request id and the claim included: a
	// request id merged once must change nothing afterwards, whatever its outcome was.
	if res.Changed || newClaim {
		ctx.SetValue(s) // encoded at once: s is not kept
	}
	release(s) // res.Day.Left is a list decode made for s alone, never reused
	if !newClaim && res.Outcome != Improved {
		p.skipped.Inc()
		p.Sink.Submit(nil, done) // acknowledged once everything handed before it is stored
		return
	}
	u := res.Day.Update(ctx.Key())
	u.Left = slices.Clone(u.Left)
	p.Sink.Submit(u, done)
}

// state returns the user's table value, or a new one; release it once the callback is done
// with it.
func state(ctx goka.Context) *State {
	if s, ok := ctx.Value().(*State); ok {
		return s
	}
	return statePool.Get().(*State)
}

// statePool recycles the States the callback decodes the table's values into, with the room
// of their days and request lists: a record then decodes its user's state without allocating.
var statePool = sync.Pool{New: func() any { return new(State) }}

// release gives s back to statePool. Nothing may use s, or slices of it, afterwards.
func release(s *State) {
	s.Days = s.Days[:0]
	statePool.Put(s)
}

// stateCodec is the table's codec: topics.Binary's, except that Decode takes its State from
// statePool (whatever decodes a value either releases it or leaves it to the collector).
type stateCodec struct{ topics.Binary[State, *State] }

// Decode decodes data into a State of statePool.
func (stateCodec) Decode(data []byte) (any, error) {
	s := statePool.Get().(*State)
	days, err := decodeDays(data, s.Days[:0])
	if err != nil {
		return nil, fmt.Errorf("steps state codec: %w", err)
	}
	s.Days = days
	return s, nil
}
