package steps

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/rankstream/rankstream/internal/board"
)

// maxSentPerPartition bounds what a partition remembers of the updates it handed to the sink:
// past it the partition forgets them all and re-sends each user-day once more. Forgetting only
// costs writes, never correctness.
const maxSentPerPartition = 1 << 17

// sent remembers, per partition, the user-days whose effect was handed to the sink since this
// processor took the partition. Every record that changes a day's effect (Outcome Improved:
// its steps, reach time, region or regions left) hands it, and so does the first record of a
// user-day since the partition was taken; so for a remembered user-day the effect in the table
// is the one handed last, and a record that leaves it unchanged needs no write: the sink
// acknowledges an update only once it and everything handed before it are stored (a failed
// write stops the processor with its memory), so the value is in the store or on its way
// there. After a rebalance (every partition may have been someone else's meanwhile) or a
// restart the memory is empty, so the first record of each user-day re-sends its whole
// effect, which is what makes a redelivered record exact after a crash.
type sent struct {
	gen   atomic.Uint64 // the partition assignment; a rebalance increments it
	parts sync.Map      // int32 → *partitionSent, each used by its partition's goroutine only
}

type partitionSent struct {
	gen  uint64
	days map[sentKey]struct{}
}

// sentKey is a user-day's 128-bit fingerprint: the user's hashes under two seeds of this
// process, the day folded into the first. It holds no pointer (the collector neither scans
// the map nor keeps the users' strings alive) and takes 16 bytes instead of 24. Two days of
// a user never share one; two user-days of distinct users do with a chance of 2^-128, so that
// a partition's 2^17 user-days at most mistake a record for a handed one with a chance of
// 2^-111 per record (a forgotten re-send after a crash), far below any hardware fault.
type sentKey struct{ a, b uint64 }

var sentSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func sentKeyOf(user string, day board.Day) sentKey {
	return sentKey{maphash.String(sentSeeds[0], user) ^ uint64(uint32(day)), maphash.String(sentSeeds[1], user)}
}

// rebalanced forgets every partition's memory: goka calls it before the partitions of a new
// assignment start, while no callback runs.
func (s *sent) rebalanced() { s.gen.Add(1) }

// fresh tells whether a record of user's day from partition must hand the day's effect to
// the sink: when it changed the effect (changed) or when the user-day was not handed since
// the last rebalance. It remembers the user-day as handed.
func (s *sent) fresh(partition int32, user string, day board.Day, changed bool) bool {
	v, ok := s.parts.Load(partition)
	if !ok {
		v, _ = s.parts.LoadOrStore(partition, &partitionSent{})
	}
	p := v.(*partitionSent)
	if gen := s.gen.Load(); p.gen != gen || p.days == nil || len(p.days) >= maxSentPerPartition {
		p.gen, p.days = gen, make(map[sentKey]struct{})
	}
	n := len(p.days)
	p.days[sentKeyOf(user, day)] = struct{}{} // one look-up: an assignment that adds nothing finds it handed
	return changed || len(p.days) > n
}
