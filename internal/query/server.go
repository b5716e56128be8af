// Package query is the read path: HTTP endpoints that answer from Redis only (never Kafka or
// ClickHouse), plus health and metrics endpoints.
//
// It imports go-redis, topics, internal/rank and internal/obs; never goka, Kafka, processors
// or sinks.
package query

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/rankstream/rankstream/internal/obs"
	goredis "github.com/redis/go-redis/v9"
)

// Paging limits of the contract.
const (
	MaxLimit     = 100
	MaxOffset    = 1000
	MaxNeighbors = 50
	defaultLimit = 20
)

// Server answers the query API from Redis.
type Server struct {
	rdb goredis.UniversalClient
	log *slog.Logger
	mux *http.ServeMux
	hot *hotCache
}

// Option configures a Server.
type Option func(*Server)

// New returns a server reading from rdb.
func New(rdb goredis.UniversalClient, log *slog.Logger, opts ...Option) *Server {
	s := &Server{rdb: rdb, log: log, hot: &hotCache{ttl: DefaultHotCacheTTL}}
	for _, o := range opts {
		o(s)
	}
	s.mux = obs.Mux(func(ctx context.Context) error { return rdb.Ping(ctx).Err() })
	s.route("GET /v1/boards/steps", s.stepsBoard)
	s.route("GET /v1/boards/steps/members/{member}", s.stepsMember)
	s.route("GET /v1/hot/search", s.hotSearch)
	return s
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// apiError is an error with an HTTP status.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

func badRequest(msg string) error { return &apiError{http.StatusBadRequest, msg} }

// route wraps a handler that returns a value or an error with JSON encoding, metrics and logs.
func (s *Server) route(pattern string, h func(*http.Request) (any, error)) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		v, err := h(r)
		code := http.StatusOK
		if err != nil {
			var ae *apiError
			if errors.As(err, &ae) {
				code = ae.code
			} else {
				code = http.StatusServiceUnavailable
				s.log.Error("query failed", "path", r.URL.Path, "err", err)
			}
			v = map[string]string{"error": err.Error()}
		}
		obs.WriteJSON(w, code, v)
		obs.HTTPRequests.WithLabelValues(pattern, strconv.Itoa(code)).Inc()
		obs.HTTPSeconds.WithLabelValues(pattern).Observe(time.Since(start).Seconds())
	})
}

// intParam parses an optional non-negative integer query parameter, capped at max.
func intParam(r *http.Request, name string, def, max int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badRequest(name + " must be a non-negative integer")
	}
	return min(n, max), nil
}
