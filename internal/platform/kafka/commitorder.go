package kafka

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/IBM/sarama"
	"github.com/lovoo/goka"
)

// Commits in offset order. goka commits a record once its callback and every emit of it
// finished (its own and its deferred commit), by marking the record's next offset in sarama's
// session; sarama keeps the highest offset marked. But a partition's records finish out of
// order whenever their emits go to different partitions or topics (a loop record to the other
// user's partition, a dead letter) or a sink acknowledges them apart: record n+1 finishing
// first marked n+2, and a crash then lost record n unprocessed (TestFriendsAfterKill: a
// friendship's mirror record never sent). commitOrder keeps, per partition of the session,
// the offsets handed to the callbacks, in order, and passes a mark on to sarama only up to the
// first record not finished yet, like Kafka Streams, which commits a task's consumed offsets
// only once everything before them was processed and flushed.

// commitOrder is one processor's: the partitions of its current session (set at each
// rebalance's Setup) and the hook that records each offset handed to a callback.
type commitOrder struct {
	parts atomic.Pointer[map[Partition]*partCommits]
}

// delivered records that ctx's record is being handed to its callback: goka does so in offset
// order per partition, before the record can finish. A visit (VisitAll) names no partition
// of the session and is left alone.
func (o *commitOrder) delivered(ctx goka.Context) {
	parts := o.parts.Load()
	if parts == nil {
		return
	}
	if p := (*parts)[Partition{string(ctx.Topic()), ctx.Partition()}]; p != nil {
		p.deliver(ctx.Offset())
	}
}

// contextWrapper is goka's WithContextWrapper for o: it records each record, then runs hooks.
func (o *commitOrder) contextWrapper(hooks []func(goka.Context)) func(goka.Context) goka.Context {
	return func(ctx goka.Context) goka.Context {
		o.delivered(ctx)
		for _, h := range hooks {
			h(ctx)
		}
		return ctx
	}
}

// groupBuilder wraps build's consumer groups so that each session goka runs marks offsets in
// order.
func (o *commitOrder) groupBuilder(build goka.ConsumerGroupBuilder) goka.ConsumerGroupBuilder {
	return func(brokers []string, group, clientID string) (sarama.ConsumerGroup, error) {
		g, err := build(brokers, group, clientID)
		if err != nil {
			return nil, err
		}
		return orderedGroup{ConsumerGroup: g, order: o}, nil
	}
}

type orderedGroup struct {
	sarama.ConsumerGroup
	order *commitOrder
}

// Consume runs one session of handler (goka's processor) on an ordered session.
func (g orderedGroup) Consume(ctx context.Context, topics []string, handler sarama.ConsumerGroupHandler) error {
	return g.ConsumerGroup.Consume(ctx, topics, &orderedHandler{ConsumerGroupHandler: handler, order: g.order})
}

// orderedHandler hands goka the session wrapped (orderedSession); sarama calls Setup before
// any ConsumeClaim of the session.
type orderedHandler struct {
	sarama.ConsumerGroupHandler
	order   *commitOrder
	session *orderedSession
}

func (h *orderedHandler) Setup(s sarama.ConsumerGroupSession) error {
	parts := map[Partition]*partCommits{}
	for topic, ps := range s.Claims() {
		for _, p := range ps {
			parts[Partition{topic, p}] = &partCommits{session: s, topic: topic, partition: p}
		}
	}
	h.session = &orderedSession{ConsumerGroupSession: s, parts: parts}
	h.order.parts.Store(&parts)
	return h.ConsumerGroupHandler.Setup(h.session)
}

func (h *orderedHandler) ConsumeClaim(_ sarama.ConsumerGroupSession, c sarama.ConsumerGroupClaim) error {
	return h.ConsumerGroupHandler.ConsumeClaim(h.session, c)
}

func (h *orderedHandler) Cleanup(sarama.ConsumerGroupSession) error {
	return h.ConsumerGroupHandler.Cleanup(h.session)
}

// orderedSession is a session whose MarkOffset (goka's commit) goes through the partition's
// partCommits.
type orderedSession struct {
	sarama.ConsumerGroupSession
	parts map[Partition]*partCommits
}

func (s *orderedSession) MarkOffset(topic string, partition int32, offset int64, metadata string) {
	if p := s.parts[Partition{topic, partition}]; p != nil {
		p.finished(offset-1, metadata)
		return
	}
	s.ConsumerGroupSession.MarkOffset(topic, partition, offset, metadata)
}

// partCommits is one claimed partition's records handed to the callbacks and not committed
// yet, in offset order.
type partCommits struct {
	session   sarama.ConsumerGroupSession
	topic     string
	partition int32

	mu      sync.Mutex
	pending []pendingRecord // pending[head:] are live
	head    int
}

type pendingRecord struct {
	offset int64
	done   bool
}

// find returns where offset is among the live records, or where it would be: at its distance
// from the first when the offsets between them have no gap (a topic that is not compacted),
// else by binary search.
func (p *partCommits) find(offset int64) (int, bool) {
	live := p.pending[p.head:]
	if len(live) > 0 {
		if i := offset - live[0].offset; i >= 0 && i < int64(len(live)) && live[i].offset == offset {
			return int(i), true
		}
	}
	return slices.BinarySearchFunc(live, offset, func(r pendingRecord, o int64) int { return int(min(max(r.offset-o, -1), 1)) })
}

func (p *partCommits) deliver(offset int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.head > 0 && p.head >= len(p.pending)/2 { // reuse the slice's front
		p.pending = p.pending[:copy(p.pending, p.pending[p.head:])]
		p.head = 0
	}
	p.pending = append(p.pending, pendingRecord{offset: offset})
}

// finished records that the record at offset finished, and marks in sarama the offset after
// the last record of the finished run at the front, if any.
func (p *partCommits) finished(offset int64, metadata string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	live := p.pending[p.head:]
	switch i, found := p.find(offset); {
	case found:
		live[i].done = true
	case i == len(live):
		// Never handed to a callback through the wrapper (a caller's own context wrapper
		// replaced it): it came after every pending record.
		p.pending = append(p.pending, pendingRecord{offset: offset, done: true})
		live = p.pending[p.head:]
	default: // before the pending ones: committed already
		return
	}
	n := 0
	for n < len(live) && live[n].done {
		n++
	}
	if n == 0 {
		return
	}
	p.head += n
	p.session.MarkOffset(p.topic, p.partition, live[n-1].offset+1, metadata)
}
