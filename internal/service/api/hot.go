package api

import (
	"context"
	"net/http"
	"time"

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

// hotAnswer is the answer of GET /v1/hot/search: the snapshot's JSON (topics.TopKSnapshot),
// followed by stale and stale_age_ms when it is the last good copy.
type hotAnswer struct {
	Snapshot topics.TopKSnapshot
	staleness
}

func (h hotAnswer) appendJSON(b []byte) []byte {
	js, err := h.Snapshot.MarshalJSON()
	if err != nil { // only for times beyond the year 9999, which the writers refuse
		return append(b, "{}"...)
	}
	b = append(b, js[:len(js)-1]...)
	return append(h.staleness.appendJSON(b), '}')
}

func (h hotAnswer) stale(age time.Duration) answer { h.staleness = staleBy(age); return h }

// hotRead is the hot-search cache's value: the snapshot Redis held (nil: none) and when the
// read started.
type hotRead struct {
	snap *topics.TopKSnapshot
	at   time.Time
}

// hotSearch serves GET /v1/hot/search?k=N: the latest snapshot with its first k items.
func (s *Server) hotSearch(ctx context.Context, r request) (any, error) {
	q, err := parseHotQuery(r.query)
	if err != nil {
		return nil, err
	}
	hr, _, err := s.hot.get(ctx, "", s.timeout, func(ctx context.Context) (hotRead, error) {
		start := time.Now()
		snap, err := s.store.HotSnapshot(ctx, topics.SearchStream)
		return hotRead{snap: snap, at: start}, err
	})
	if err != nil {
		return nil, err
	}
	snap := hr.snap
	if snap == nil {
		return nil, &apiError{http.StatusNotFound, "no hot-search snapshot yet: " + rsredis.HotKey(topics.SearchStream) +
			" is written when the hot-search pipeline closes its first window"}
	}
	out := *snap // the cached snapshot is shared: trim a copy
	out.Items = out.Items[:min(q.K, len(out.Items))]
	return hotAnswer{Snapshot: out, staleness: staleness{readAt: hr.at}}, nil
}
