package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/rankstream/rankstream/internal/board"
	"github.com/rankstream/rankstream/internal/obs"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// Paging limits of the contract.
const (
	MaxLimit     = 100
	MaxOffset    = 1000
	MaxNeighbors = 50
	defaultLimit = 20
	// DefaultRedisTimeout is the default deadline of all the Redis calls of one request.
	DefaultRedisTimeout = 500 * time.Millisecond
	// maxReason bounds an error message in a response.
	maxReason = 512
)

// Server answers the query API from Redis.
type Server struct {
	store   *rsredis.Reader
	ready   func() error // besides Redis, for /readyz (WithReady)
	log     *slog.Logger
	mux     *http.ServeMux
	hot     *ttlCache[hotRead]
	boardC  *ttlCache[topPage]  // the hot boards' Top-100s
	pages   *coalescer[topPage] // the page reads in flight, shared by identical ones
	good    *lastGood           // the last good answers, for a Redis outage
	timeout time.Duration
	errLog  obs.LogLimiter
	boards  map[string]*board.Board // WithBoards
}

// Option configures a Server.
type Option func(*Server)

// WithRedisTimeout sets the deadline of all the Redis calls of one request, overriding the
// default of DefaultRedisTimeout (500 ms): a request that Redis does not answer within it gets
// 503 with Retry-After. Give the Reader's client the same bound (sinks/redis.OpenReader) so that no network
// read or wait for a pooled connection outlives it.
func WithRedisTimeout(d time.Duration) Option {
	return func(s *Server) {
		if d > 0 {
			s.timeout = d
		}
	}
}

// WithBoardCacheTTL sets how long the Top-100 of a hot board (one read more than HotBoardReads
// times within the TTL) is served from memory, overriding the default of DefaultBoardCacheTTL
// (500 ms): a burst of page views of a board costs one Redis read per TTL, and its pages within
// the Top-100 show changes at most a TTL late. 0 turns the cache off (every page reads Redis).
// A member's own rank always reads Redis.
func WithBoardCacheTTL(ttl time.Duration) Option {
	return func(s *Server) { s.boardC.ttl = max(ttl, 0) }
}

// WithReady makes /readyz also require ready to return nil, besides Redis answering: e.g. the
// processors' supervisor of a process that serves the API beside them (rankstream dev).
func WithReady(ready func() error) Option {
	return func(s *Server) { s.ready = ready }
}

// New returns a server reading from store.
func New(store *rsredis.Reader, log *slog.Logger, opts ...Option) *Server {
	s := &Server{store: store, log: log, timeout: DefaultRedisTimeout, boards: map[string]*board.Board{},
		hot:    newTTLCache[hotRead]("hot", DefaultHotCacheTTL, 0),
		boardC: newTTLCache[topPage]("boards", DefaultBoardCacheTTL, HotBoardReads),
		pages:  newCoalescer[topPage](),
		good:   newLastGood(lastGoodAnswers)}
	for _, o := range opts {
		o(s)
	}
	s.mux = obs.Mux(func(ctx context.Context) error {
		if s.ready != nil {
			if err := s.ready(); err != nil {
				return err
			}
		}
		if err := store.Ping(ctx); err != nil {
			return fmt.Errorf("redis down (reads answer from their last good copy, marked stale): %w", err)
		}
		return nil
	})
	s.route("GET /v1/boards/steps", s.stepsBoard)
	s.route("GET /v1/boards/steps/members/{member}", s.stepsMember)
	s.route("GET /v1/boards/{board}", s.scoreBoard)
	s.route("GET /v1/boards/{board}/members/{member}", s.scoreMember)
	s.route("GET /v1/hot/search", s.hotSearch)
	s.route("GET /v1/friends/{user}/steps", s.friendsSteps)
	s.route("GET /v1/friends/{user}/boards/{board}", s.friendsOfBoard)
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

// route wraps a handler that returns a value or an error with a deadline for its Redis
// calls, JSON encoding, metrics and logs. Errors that are not an *apiError are Redis failures:
// the last good answer of the same request URI, marked stale, if the server holds one (a
// successful answer is kept as such), else 503 with Retry-After and a short reason, logged at
// most once a second.
func (s *Server) route(pattern string, h func(context.Context, *http.Request) (any, error)) {
	observe := obs.NewHTTPRoute(pattern)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
		v, err := h(ctx, r)
		cancel()
		uri := r.RequestURI
		if uri == "" { // a request built in the process, not read from a client
			uri = r.URL.RequestURI()
		}
		var ae *apiError
		if err != nil && !errors.As(err, &ae) && r.Context().Err() == nil {
			if old, ok := s.good.get(uri, time.Now()); ok {
				s.errLog.Log(r.Context(), s.log, slog.LevelWarn, "query: redis read failed; answering the last good copy", "path", r.URL.Path, "err", err)
				v, err = old, nil
				obs.QueryCache.WithLabelValues("last-good", "hit").Inc()
			} else {
				obs.QueryCache.WithLabelValues("last-good", "miss").Inc()
			}
		} else if a, ok := v.(answer); ok && err == nil {
			at := a.dataAt()
			if at.IsZero() {
				at = start
			}
			s.good.put(uri, a, at)
		}
		code := http.StatusOK
		if a, ok := v.(jsonAppender); ok && err == nil {
			writeJSON(w, code, a)
		} else if err != nil {
			if !errors.As(err, &ae) {
				ae = s.unavailable(r, err)
			}
			code = ae.code
			if code == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "1")
			}
			obs.WriteJSON(w, code, map[string]string{"error": cut(ae.msg, maxReason)})
		} else {
			obs.WriteJSON(w, code, v)
		}
		observe.Observe(code, time.Since(start))
	})
}

// unavailable is the answer to a failed Redis read: 503 with a short reason. The full error
// goes to the log, at most once a second (with the count of those not logged).
func (s *Server) unavailable(r *http.Request, err error) *apiError {
	if r.Context().Err() != nil { // the client went away: nothing to tell anyone
		return &apiError{http.StatusServiceUnavailable, "request cancelled"}
	}
	s.errLog.Log(r.Context(), s.log, slog.LevelError, "query: redis read failed", "path", r.URL.Path, "err", err)
	if rsredis.IsTimeout(err) {
		return &apiError{http.StatusServiceUnavailable, fmt.Sprintf("redis did not answer within %s; retry", s.timeout)}
	}
	return &apiError{http.StatusServiceUnavailable, "redis unavailable; retry"}
}
