package api

import (
	"context"
	"sync/atomic"
	"time"
)

// deadlines hands out the Redis deadlines of the requests served on fasthttp (which never
// cancel a request before its deadline): the requests that begin within the same millisecond
// share one context, which ends timeout after the end of that millisecond. A context and a
// timer of its own per request (context.WithTimeout, then its cancel) were about 4% of
// serve's CPU on the board reads; shared, there are at most a thousand a second, whatever the
// rate of requests. A request's deadline is thus at most a millisecond later than its own.
type deadlines struct {
	timeout time.Duration
	cur     atomic.Pointer[sharedDeadline]
}

// at returns the context of a request that begins at now.
func (d *deadlines) at(now time.Time) context.Context {
	ms := now.UnixMilli()
	if c := d.cur.Load(); c != nil && c.ms == ms {
		return c
	}
	c := &sharedDeadline{ms: ms, deadline: time.UnixMilli(ms + 1).Add(d.timeout), done: make(chan struct{})}
	time.AfterFunc(c.deadline.Sub(now), func() {
		c.ended.Store(true)
		close(c.done)
	})
	d.cur.Store(c) // a request of the same millisecond that stored another one meanwhile loses only the sharing
	return c
}

// sharedDeadline is a context with no values that ends at its deadline, not sooner.
type sharedDeadline struct {
	ms       int64 // the millisecond its requests began in
	deadline time.Time
	done     chan struct{}
	ended    atomic.Bool // set before done is closed
}

func (c *sharedDeadline) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *sharedDeadline) Done() <-chan struct{}       { return c.done }
func (c *sharedDeadline) Value(any) any               { return nil }

func (c *sharedDeadline) Err() error {
	if c.ended.Load() {
		return context.DeadlineExceeded
	}
	return nil
}
