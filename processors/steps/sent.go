package steps

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rankstream/rankstream/internal/board"
)

// maxSentPerPartition bounds what a partition remembers of the updates it handed to the sink:
// past it the partition forgets them all and re-sends each user-day once more. Forgetting only
// costs writes, never correctness.
const maxSentPerPartition = 1 << 17

// sent remembers, per partition, the last update of each user-day handed to the sink since
// this processor took the partition. A record whose day equals what was handed already needs
// no write: the sink acknowledges an update only once it and everything handed before it are
// stored (a failed write stops the processor with its memory), so the value is in the store
// or on its way there. After a rebalance (every partition may have been someone else's
// meanwhile) or a restart the memory is empty, so the first record of each user-day re-sends
// its whole effect, which is what makes a redelivered record exact after a crash.
type sent struct {
	gen   atomic.Uint64 // the partition assignment; a rebalance increments it
	parts sync.Map      // int32 → *partitionSent, each used by its partition's goroutine only
}

type partitionSent struct {
	gen  uint64
	days map[sentKey]sentDay
}

type sentKey struct {
	user string
	day  board.Day
}

type sentDay struct {
	steps, reachedMs int64
	region           string
	left             []string
}

// rebalanced forgets every partition's memory: goka calls it before the partitions of a new
// assignment start, while no callback runs.
func (s *sent) rebalanced() { s.gen.Add(1) }

// fresh tells whether u differs from the last update of its user-day handed to the sink from
// partition since the last rebalance, and if so remembers u as handed.
func (s *sent) fresh(partition int32, u *board.StepUpdate) bool {
	v, ok := s.parts.Load(partition)
	if !ok {
		v, _ = s.parts.LoadOrStore(partition, &partitionSent{})
	}
	p := v.(*partitionSent)
	if gen := s.gen.Load(); p.gen != gen || p.days == nil || len(p.days) >= maxSentPerPartition {
		p.gen, p.days = gen, make(map[sentKey]sentDay)
	}
	k := sentKey{u.User, u.Day}
	if d, ok := p.days[k]; ok && d.steps == u.Steps && d.reachedMs == u.ReachedMs && d.region == u.Region && slices.Equal(d.left, u.Left) {
		return false
	}
	p.days[k] = sentDay{steps: u.Steps, reachedMs: u.ReachedMs, region: u.Region, left: slices.Clone(u.Left)}
	return true
}
