// Package backoff is rankstream's one retry policy: exponential backoff with jitter for
// a sink or store that is down (Backoff: the first wait is about first, each next one twice as
// long, up to max), and Retry, the loop every retrying caller uses: it stops at a success, at
// an error its caller calls permanent, or when the context ends.
//
// Why not cenkalti/backoff/v5: its Retry needs errors wrapped as Permanent at the call site,
// while our callers classify errors with predicates they already have (IsRetryable,
// ErrInvalidSnapshot, kerr.IsRetriable); its elapsed-time cap and its timers add nothing our
// contexts do not give; and 80 lines of ours cost less than a dependency.
//
// It imports only the standard library.
package backoff

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Backoff is the state of one retry loop. It is not safe for concurrent use.
type Backoff struct {
	first, next, max time.Duration
}

// New returns a backoff whose first wait is first (max if smaller) and whose waits grow to
// max (each wait is its base plus up to half of it, at random, so that clients failing
// together do not retry together).
func New(first, max time.Duration) *Backoff {
	if first <= 0 || max <= 0 {
		panic("BUG: backoff.New: durations must be positive")
	}
	return &Backoff{first: min(first, max), next: min(first, max), max: max}
}

// Base is the base of the next wait (the wait is between it and 1.5 times it).
func (b *Backoff) Base() time.Duration { return b.next }

// Next returns the next delay and doubles the next one's base, up to max.
func (b *Backoff) Next() time.Duration {
	d := b.next + rand.N(b.next/2+1)
	b.next = min(2*b.next, b.max)
	return d
}

// Wait waits the next delay (Next). It returns false, at once, when ctx ends first.
func (b *Backoff) Wait(ctx context.Context) bool {
	t := time.NewTimer(b.Next())
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Reset makes the next wait the first again (after a success that proved the failure over).
func (b *Backoff) Reset() { b.next = b.first }

// Retry runs op until it succeeds, until it fails with an error that retryable rejects (a nil
// retryable accepts every error), or until ctx ends, waiting b's backoff between attempts.
// Before each wait, notify (when not nil) is told the attempt's number (from 1), its error and
// the base of the wait to come. Retry returns nil after a success; the error of an attempt that
// is not retried, as it is; or, when ctx ended before the next attempt, an error wrapping both
// ctx's error and the last attempt's.
func Retry(ctx context.Context, b *Backoff, retryable func(error) bool, notify func(attempt int, err error, wait time.Duration), op func() error) error {
	for attempt := 1; ; attempt++ {
		err := op()
		if err == nil {
			return nil
		}
		if retryable != nil && !retryable(err) {
			return err
		}
		if notify != nil {
			notify(attempt, err, b.Base())
		}
		if !b.Wait(ctx) {
			return fmt.Errorf("gave up after %d attempts: %w: %w", attempt, context.Cause(ctx), err)
		}
	}
}
