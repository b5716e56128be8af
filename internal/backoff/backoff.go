// Package backoff is the exponential backoff with jitter of rankstream's retry loops (a sink
// or store that is down): the first wait is about First, each next one twice as long, up to
// Max.
//
// It imports only the standard library.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is the state of one retry loop. It is not safe for concurrent use.
type Backoff struct {
	next, max time.Duration
}

// New returns a backoff whose first wait is first (max if smaller) and whose waits grow to
// max (each wait is its base plus up to half of it, at random, so that clients failing
// together do not retry together).
func New(first, max time.Duration) *Backoff {
	if first <= 0 || max <= 0 {
		panic("BUG: backoff.New: durations must be positive")
	}
	return &Backoff{next: min(first, max), max: max}
}

// Base is the base of the next wait (the wait is between it and 1.5 times it).
func (b *Backoff) Base() time.Duration { return b.next }

// Wait waits the next delay and doubles the next one's base, up to max. It returns false,
// at once, when ctx ends first.
func (b *Backoff) Wait(ctx context.Context) bool {
	d := b.next + rand.N(b.next/2+1)
	b.next = min(2*b.next, b.max)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
