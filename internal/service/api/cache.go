package api

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/singleflight"

	"github.com/rankstream/rankstream/internal/platform/obs"
)

// Defaults of the query service's local caches.
const (
	// DefaultBoardCacheTTL is how long the Top-100 of a hot board is served from memory.
	DefaultBoardCacheTTL = 500 * time.Millisecond
	// HotBoardReads is how many reads of a board within one TTL make it hot: the next read
	// loads its Top-100 into the cache. A board read less often reads Redis for every request.
	HotBoardReads = 3
	// maxCachedBoards bounds the keys a cache tracks (a board's Top-100 and read counts):
	// when it is reached, the keys neither read nor loaded within the last TTL are dropped,
	// and a new key finding none to drop is read from Redis without being tracked.
	maxCachedBoards = 4096
	// lastGoodAnswers bounds the last good answers kept for a Redis outage (one per request
	// URI; a top-100 page is about 10 KB, so at most about 40 MB).
	lastGoodAnswers = 4096
)

// ttlCache serves values read from Redis from memory for a TTL, by key, and lets one read at a
// time per key reach Redis: the requests that miss meanwhile share it (singleflight). A key is
// cached once it is read more than minReads times within a TTL (0: from its first read). It
// is the cache of the hot-search snapshot (one key) and of the hot boards' Top-100s.
type ttlCache[V any] struct {
	name     string // the cache label of rankstream_query_cache_requests_total
	ttl      time.Duration
	minReads int
	flight   singleflight.Group
	hits     prometheus.Counter
	misses   prometheus.Counter

	mu   sync.Mutex
	keys map[string]*cached[V]
}

type cached[V any] struct {
	val    V
	readAt time.Time // when the read of val started; zero: never read
	reads  int       // reads since window
	window time.Time
}

func newTTLCache[V any](name string, ttl time.Duration, minReads int) *ttlCache[V] {
	return &ttlCache[V]{name: name, ttl: ttl, minReads: minReads, keys: map[string]*cached[V]{},
		hits: obs.QueryCache.WithLabelValues(name, "hit"), misses: obs.QueryCache.WithLabelValues(name, "miss")}
}

// get returns key's value: from memory while it is younger than the TTL, else from read, run
// once for all the requests that ask meanwhile with a deadline of timeout (it outlives a
// waiter that gives up, as others may share it). ok is false when key is not hot (read fewer
// than minReads times within the TTL, or a board cache with TTL 0): the caller reads Redis
// itself.
func (c *ttlCache[V]) get(ctx context.Context, key string, timeout time.Duration, read func(context.Context) (V, error)) (v V, ok bool, err error) {
	if c.ttl == 0 && c.minReads > 0 { // a board cache turned off
		return v, false, nil
	}
	now := time.Now()
	c.mu.Lock()
	e := c.keys[key]
	if e == nil {
		if len(c.keys) >= maxCachedBoards {
			c.sweep(now)
		}
		if len(c.keys) >= maxCachedBoards { // every key tracked is in use: this one stays cold
			c.mu.Unlock()
			return v, false, nil
		}
		e = &cached[V]{window: now}
		c.keys[key] = e
	}
	if !e.readAt.IsZero() && now.Sub(e.readAt) < c.ttl {
		v = e.val
		c.mu.Unlock()
		c.hits.Inc()
		return v, true, nil
	}
	if now.Sub(e.window) >= max(c.ttl, time.Millisecond) {
		e.window, e.reads = now, 0
	}
	e.reads++
	// A key stays hot while its value was loaded within the last two TTLs, so that a board
	// read steadily costs one Redis read per TTL, not minReads more each time it expires.
	hot := c.minReads == 0 || e.reads > c.minReads || now.Sub(e.readAt) < 2*c.ttl
	c.mu.Unlock()
	if !hot {
		return v, false, nil
	}
	led := false // set by the request whose read runs
	ch := c.flight.DoChan(key, func() (any, error) {
		led = true
		c.misses.Inc()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		defer cancel()
		start := time.Now()
		v, err := read(rctx)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		if e := c.keys[key]; e != nil {
			e.val, e.readAt = v, start
		}
		c.mu.Unlock()
		return v, nil
	})
	select {
	case <-ctx.Done():
		return v, true, fmt.Errorf("api: %s cache: %w", c.name, ctx.Err())
	case res := <-ch:
		if !led {
			c.hits.Inc()
		}
		if res.Err != nil {
			return v, true, res.Err
		}
		return res.Val.(V), true, nil
	}
}

// sweep drops the keys neither read nor loaded within the last TTL (c.mu held).
func (c *ttlCache[V]) sweep(now time.Time) {
	for k, e := range c.keys {
		if now.Sub(e.window) >= c.ttl && now.Sub(e.readAt) >= c.ttl {
			delete(c.keys, k)
		}
	}
}

// staleness marks an answer served from the last good copy while Redis is unavailable: both
// fields are omitted from a fresh answer.
type staleness struct {
	Stale bool `json:"stale,omitempty"`
	// StaleAgeMs is how long ago the copy was read from Redis.
	StaleAgeMs *int64 `json:"stale_age_ms,omitempty"`
	// readAt is when the answer's data was read from Redis, when earlier than the request (a
	// page cut from a cached Top-100); zero: during the request.
	readAt time.Time
}

func staleBy(age time.Duration) staleness {
	ms := age.Milliseconds()
	return staleness{Stale: true, StaleAgeMs: &ms}
}

func (s staleness) dataAt() time.Time { return s.readAt }

// answer is a response that may be kept as the last good copy and served stale.
type answer interface {
	jsonAppender
	// stale returns a copy of the answer marked as read age ago.
	stale(age time.Duration) answer
	// dataAt is when its data was read from Redis if before the request, else zero.
	dataAt() time.Time
}

func (p Page) stale(age time.Duration) answer          { p.staleness = staleBy(age); return p }
func (s Standing) stale(age time.Duration) answer      { s.staleness = staleBy(age); return s }
func (p BoardPage) stale(age time.Duration) answer     { p.staleness = staleBy(age); return p }
func (s BoardStanding) stale(age time.Duration) answer { s.staleness = staleBy(age); return s }

// lastGood keeps the last successful answer of each request (its exact request URI) for a
// Redis outage, least recently answered first out beyond max entries. Answers are immutable
// once kept. Its entries live in one array linked by index (most recently answered first),
// so that keeping an answer allocates nothing: a new list element and entry per request were
// most of the cost of a member's read, whose URI is new nearly every time.
type lastGood struct {
	mu         sync.Mutex
	slots      []goodAnswer // len: the entries kept, up to cap: max
	byRU       map[string]int32
	head, tail int32 // the most and the least recently answered; -1: none
}

type goodAnswer struct {
	uri        string
	v          answer
	at         time.Time
	prev, next int32 // toward the head and the tail; -1: none
}

func newLastGood(max int) *lastGood {
	return &lastGood{slots: make([]goodAnswer, 0, max), byRU: make(map[string]int32, max), head: -1, tail: -1}
}

// put keeps v as the last good answer of uri.
func (l *lastGood) put(uri string, v answer, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, ok := l.byRU[uri]
	switch {
	case ok:
		l.unlink(i)
		l.slots[i].v, l.slots[i].at = v, at
	case len(l.slots) < cap(l.slots):
		i = int32(len(l.slots))
		l.slots = append(l.slots, goodAnswer{uri: uri, v: v, at: at})
		l.byRU[uri] = i
	default: // the least recently answered gives its slot
		i = l.tail
		l.unlink(i)
		delete(l.byRU, l.slots[i].uri)
		l.slots[i] = goodAnswer{uri: uri, v: v, at: at}
		l.byRU[uri] = i
	}
	l.slots[i].prev, l.slots[i].next = -1, l.head
	if l.head >= 0 {
		l.slots[l.head].prev = i
	}
	l.head = i
	if l.tail < 0 {
		l.tail = i
	}
}

// unlink takes slot i out of the list (l.mu held).
func (l *lastGood) unlink(i int32) {
	g := &l.slots[i]
	if g.prev >= 0 {
		l.slots[g.prev].next = g.next
	} else {
		l.head = g.next
	}
	if g.next >= 0 {
		l.slots[g.next].prev = g.prev
	} else {
		l.tail = g.prev
	}
}

// get returns the last good answer of uri marked stale with its age at now.
func (l *lastGood) get(uri string, now time.Time) (answer, bool) {
	l.mu.Lock()
	i, ok := l.byRU[uri]
	var g goodAnswer
	if ok {
		g = l.slots[i]
	}
	l.mu.Unlock()
	if !ok {
		return nil, false
	}
	return g.v.stale(now.Sub(g.at)), true
}
