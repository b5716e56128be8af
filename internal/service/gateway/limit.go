package gateway

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rankstream/rankstream/internal/platform/obs"
)

// limiter is the per-user token buckets: each user may make rate requests a second on
// average, burst at once. At most max buckets are kept, the least recently used one dropped to
// make room for a new user: a bucket idle for burst/rate is full again, which is what a new
// bucket is, so dropping it loses nothing; one dropped earlier (more than max users active
// within burst/rate) gives its user a full burst back early, counted in
// obs.GatewayRateBucketsEvicted. Time is passed in.
type limiter struct {
	rate, burst float64
	max         int

	mu     sync.Mutex
	lru    list.List // of *bucket, most recently used first
	byUser map[string]*list.Element
}

type bucket struct {
	user   string
	tokens float64
	last   time.Time
}

// newLimiter returns buckets of rate tokens a second up to burst, at most max of them in
// memory; rate 0 limits nothing.
func newLimiter(rate float64, burst, max int) *limiter {
	return &limiter{rate: rate, burst: float64(burst), max: max, byUser: make(map[string]*list.Element)}
}

// take takes one token from the bucket of each user (distinct, non-empty) at now, or none of
// them: when a bucket lacks a token it returns false and how long until every one of them
// has one again.
func (l *limiter) take(users []string, now time.Time) (wait time.Duration, ok bool) {
	if l.rate <= 0 || len(users) == 0 {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	bs := make([]*bucket, len(users))
	for i, u := range users {
		b := l.bucket(u, now)
		b.tokens = min(l.burst, b.tokens+l.rate*now.Sub(b.last).Seconds())
		b.last = now
		if b.tokens < 1 {
			wait = max(wait, time.Duration((1-b.tokens)/l.rate*float64(time.Second)))
		}
		bs[i] = b
	}
	if wait > 0 {
		return wait, false
	}
	for _, b := range bs {
		b.tokens--
	}
	return 0, true
}

// bucket returns user's bucket, moved to the front, making one (full) if there is none.
func (l *limiter) bucket(user string, now time.Time) *bucket {
	if e, ok := l.byUser[user]; ok {
		l.lru.MoveToFront(e)
		return e.Value.(*bucket)
	}
	if l.lru.Len() >= l.max {
		old := l.lru.Back()
		b := old.Value.(*bucket)
		if b.tokens+l.rate*now.Sub(b.last).Seconds() < l.burst {
			obs.GatewayRateBucketsEvicted.Inc()
		}
		l.lru.Remove(old)
		delete(l.byUser, b.user)
	}
	b := &bucket{user: user, tokens: l.burst, last: now}
	l.byUser[user] = l.lru.PushFront(b)
	obs.GatewayRateBuckets.Set(float64(l.lru.Len()))
	return b
}

// budget bounds the bytes of records handed to the Kafka client and not yet acknowledged or
// failed.
type budget struct {
	max  int64
	used atomic.Int64
}

// acquire reserves n bytes, or nothing when that would pass the bound.
func (b *budget) acquire(n int64) bool {
	for {
		used := b.used.Load()
		if used+n > b.max {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			obs.GatewayInFlightBytes.Add(float64(n))
			return true
		}
	}
}

// release gives n reserved bytes back.
func (b *budget) release(n int64) {
	b.used.Add(-n)
	obs.GatewayInFlightBytes.Sub(float64(n))
}

// breaker sheds at once the requests a Kafka that fails could not serve anyway. Once a
// request's records were not acknowledged (Kafka failed, or did not answer within the
// request deadline) it opens: then at most cap(probes) requests at a time try Kafka, the others
// are answered 503 at once instead of each holding a connection until its deadline (a midnight
// surge against a Kafka that is down would otherwise fill the server's concurrency cap, whose
// 503s carry no jitter). The first request Kafka acknowledges closes it.
type breaker struct {
	open   atomic.Bool
	probes chan struct{}
}

// enter lets a request try Kafka (ok) or not; leave must be called when it is done.
func (b *breaker) enter() (leave func(), ok bool) {
	if !b.open.Load() {
		return func() {}, true
	}
	select {
	case b.probes <- struct{}{}:
		return func() { <-b.probes }, true
	default:
		return nil, false
	}
}

// record notes whether Kafka acknowledged a request, and reports whether that changed the
// state (opened or closed the breaker).
func (b *breaker) record(acknowledged bool) (changed bool) {
	return b.open.Swap(!acknowledged) == acknowledged
}
