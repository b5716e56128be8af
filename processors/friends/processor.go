package friends

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/lovoo/goka"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// Group is the processor group's logical name; its table holds one State per user.
const Group = topics.FriendsGroup

// Sink stores users' friend sets. Submit is called once per consumed record (input or loop),
// in offset order per partition: with the pair the record decided (a duplicate's too), or nil
// after a record that went to the dead-letter topic unapplied. done must be called once the
// update (and every update submitted before it) is durably stored, so that the record's
// offset may be committed; the sink may block Submit to push back.
type Sink interface {
	Submit(u *board.FriendUpdate, done func(error))
}

// Config is what the processor needs besides Kafka.
type Config struct {
	Names topics.Names
	Rules topics.FriendRules
	Sink  Sink
	Log   *slog.Logger
}

type processor struct {
	Config
	dlq     goka.Stream
	in      prometheus.Counter
	refused prometheus.Counter
}

// Graph returns the processor's group graph: the input stream, the loop topic that carries a
// pair's op to its other user, the table, and the dead-letter topic.
func Graph(cfg Config) *goka.GroupGraph {
	group, topic := string(cfg.Names.Group(Group)), string(cfg.Names.Stream(topics.FriendsChanged))
	p := &processor{Config: cfg, dlq: cfg.Names.Stream(topics.DLQ), in: obs.EventsIn(group, topic),
		refused: obs.EventsOutcome(group, topic, "refused")}
	return goka.DefineGroup(cfg.Names.Group(Group),
		goka.Input(cfg.Names.Stream(topics.FriendsChanged), topics.Raw{}, p.input),
		goka.Loop(topics.Raw{}, p.loop),
		goka.Persist(topics.Binary[State, *State]{}),
		goka.Output(p.dlq, topics.Raw{}),
	)
}

// Run runs the processor until ctx is cancelled or it fails. opts carry the Kafka set-up
// (kafka.Config.ProcessorOptions) or, in tests, goka.WithTester.
func Run(ctx context.Context, cfg Config, brokers []string, opts ...goka.ProcessorOption) error {
	return kafka.RunGraph(ctx, "friends processor", brokers, Graph(cfg), cfg.Log, opts...)
}

// input applies a user's op to the user's side and sends the pair's resulting op to the
// other user, always: a redelivery after a crash must reach the other side even when this
// side had applied it already.
func (p *processor) input(ctx goka.Context, msg any) {
	p.in.Inc()
	done := ctx.DeferCommit()
	value, _ := msg.([]byte)
	o, err := topics.DecodeFriendOp(ctx.Key(), value, ctx.Timestamp(), p.Rules)
	if err != nil {
		kafka.DeadLetter(ctx, p.dlq, value, err)
		p.Sink.Submit(nil, done)
		return
	}
	res := p.apply(ctx, Op{Friend: o.FriendID, Add: o.Op == topics.OpAdd, TSMs: o.TS.Millis()}, value)
	ctx.Loopback(o.FriendID, topics.FriendLoopRecord{Kind: topics.FriendMirror, Add: res.Add, TSMs: res.TSMs, Friend: o.UserID}.Encode())
	p.Sink.Submit(&board.FriendUpdate{User: o.UserID, Friend: o.FriendID, Friends: res.Add}, done)
}

// loop applies the other side's op to this user's side, and replies with the pair's op when
// it differs from the one received (this side knew a later op, or refused the add). The ops
// sent back and forth only grow (Wins), and a removal is never refused, so a pair's exchange
// ends after a few records.
func (p *processor) loop(ctx goka.Context, msg any) {
	done := ctx.DeferCommit()
	value, _ := msg.([]byte)
	r, err := topics.DecodeFriendLoopRecord(value)
	if err != nil { // only a foreign writer makes one: set it aside, never stop the group
		kafka.DeadLetter(ctx, p.dlq, value, err)
		p.Sink.Submit(nil, done)
		return
	}
	in := Op{Friend: r.Friend, Add: r.Add, TSMs: r.TSMs}
	// The dead letter of a refused add names it in the input's own format.
	asInput := []byte(`{"user_id":` + strconv.Quote(r.Friend) + `,"friend_id":` + strconv.Quote(ctx.Key()) +
		`,"op":"add","ts":` + strconv.FormatInt(r.TSMs, 10) + `}`)
	res := p.apply(ctx, in, asInput)
	if res != in {
		ctx.Loopback(r.Friend, topics.FriendLoopRecord{Kind: topics.FriendReply, Add: res.Add, TSMs: res.TSMs, Friend: ctx.Key()}.Encode())
	}
	p.Sink.Submit(&board.FriendUpdate{User: ctx.Key(), Friend: r.Friend, Friends: res.Add}, done)
}

// apply merges op into the user's state, writes it back when it changed, and dead-letters a
// refused add (value is what the dead letter holds). It returns the pair's op.
func (p *processor) apply(ctx goka.Context, op Op, value []byte) Op {
	s := state(ctx)
	res := s.Apply(op)
	if res.Changed {
		ctx.SetValue(s)
	}
	if res.Refused != nil {
		p.refused.Inc()
		kafka.DeadLetter(ctx, p.dlq, value, fmt.Errorf("add of %s refused on both sides: %w", op.Friend, res.Refused))
	}
	return res.Pair
}

// state returns the user's table value, or a new one.
func state(ctx goka.Context) *State {
	if s, ok := ctx.Value().(*State); ok {
		return s
	}
	return new(State)
}
