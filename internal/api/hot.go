package api

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/rankstream/rankstream/internal/obs"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// Hot-search limits of the contract.
const (
	// MaxHotK caps k of GET /v1/hot/search; the default is 10.
	MaxHotK     = 100
	defaultHotK = 10
	// DefaultHotCacheTTL is how long a snapshot read from Redis is served from memory.
	DefaultHotCacheTTL = time.Second
)

// WithHotCacheTTL sets how long the hot-search snapshot read from Redis (or its absence) is
// served from memory, overriding the default of DefaultHotCacheTTL (1 s): a burst of page
// views then costs one Redis GET per TTL, and a new snapshot shows at most a TTL late. 0 reads
// Redis for every request, though concurrent requests still share one read.
func WithHotCacheTTL(ttl time.Duration) Option {
	return func(s *Server) { s.hot.ttl = max(ttl, 0) }
}

// hotCache holds the latest hot-search snapshot read from Redis.
type hotCache struct {
	ttl    time.Duration
	flight singleflight.Group // one Redis read at a time, shared by the requests that wait

	mu     sync.Mutex
	snap   *topics.TopKSnapshot // nil: Redis held none
	readAt time.Time            // when the read of snap started; zero: never read
}

// hotSearch serves GET /v1/hot/search?k=N: the latest snapshot with its first k items.
func (s *Server) hotSearch(ctx context.Context, r *http.Request) (any, error) {
	q, err := parseHotQuery(r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	snap, err := s.latestHot(ctx)
	if err != nil {
		return nil, err
	}
	if snap == nil {
		return nil, &apiError{http.StatusNotFound, "no hot-search snapshot yet: " + rsredis.HotKey(topics.SearchStream) +
			" is written when the hot-search pipeline closes its first window"}
	}
	out := *snap // the cached snapshot is shared: trim a copy
	out.Items = out.Items[:min(q.K, len(out.Items))]
	return out, nil
}

// latestHot returns the cached snapshot while it is younger than the TTL, and otherwise reads
// Redis once for all the requests that ask meanwhile. nil means Redis holds no snapshot.
func (s *Server) latestHot(ctx context.Context) (*topics.TopKSnapshot, error) {
	c := s.hot
	c.mu.Lock()
	if !c.readAt.IsZero() && time.Now().Sub(c.readAt) < c.ttl {
		snap := c.snap
		c.mu.Unlock()
		obs.QueryCache.WithLabelValues("hot", "hit").Inc()
		return snap, nil
	}
	c.mu.Unlock()
	read := false // set by the request whose read runs
	ch := c.flight.DoChan("", func() (any, error) {
		read = true
		obs.QueryCache.WithLabelValues("hot", "miss").Inc()
		// The read outlives a waiter that gives up, as other requests may share it; it has
		// the deadline of one request.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		defer cancel()
		start := time.Now()
		snap, err := s.store.HotSnapshot(rctx, topics.SearchStream)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.snap, c.readAt = snap, start
		c.mu.Unlock()
		return snap, nil
	})
	select {
	case <-ctx.Done():
		return nil, fmt.Errorf("api: hot search: %w", ctx.Err())
	case res := <-ch:
		if !read {
			obs.QueryCache.WithLabelValues("hot", "hit").Inc()
		}
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*topics.TopKSnapshot), nil
	}
}
