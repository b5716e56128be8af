package steps

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// claims names each claim of a partition by this processor: from the assignment that gave it
// the partition to the next rebalance, or to the process's end. A claim's id is random, 64
// bits, never 0, so that no other claim, of this process or another, takes it but with a
// chance of 2^-64.
//
// The id is what lets a record skip its write: every record that changes a day's effect
// (Outcome Improved: its steps, reach time, region or regions left) hands it to the sink, and
// so does the first record of a user-day in a claim; each stores the claim in the day's state
// (DayState.HandedIn). So a day whose state names the current claim holds the effect handed
// last, and a record that leaves it unchanged needs no write: the sink acknowledges an update
// only once it and everything handed before it are stored (a failed write stops the
// processor, and its claims end with it), so the value is in the store or on its way there.
// A state restored from the changelog after a rebalance or a restart names an earlier claim,
// so the first record of each user-day re-sends its whole effect, which is what makes a
// redelivered record exact after a crash.
type claims struct {
	gen   atomic.Uint64 // the partition assignment; a rebalance increments it
	parts sync.Map      // int32 → *claim, each used by its partition's goroutine only
}

type claim struct{ gen, id uint64 }

// rebalanced ends every partition's claim: goka calls it before the partitions of a new
// assignment start, while no callback runs.
func (c *claims) rebalanced() { c.gen.Add(1) }

// of returns the id of partition's current claim.
func (c *claims) of(partition int32) uint64 {
	v, ok := c.parts.Load(partition)
	if !ok {
		v, _ = c.parts.LoadOrStore(partition, &claim{})
	}
	p := v.(*claim)
	if gen := c.gen.Load(); p.id == 0 || p.gen != gen {
		p.gen, p.id = gen, newClaimID()
	}
	return p.id
}

// newClaimID is a random id, never 0 (a day handed in no claim).
func newClaimID() uint64 {
	for {
		if id := rand.Uint64(); id != 0 {
			return id
		}
	}
}
