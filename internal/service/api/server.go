package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/obs"
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
	routes  routes // the read endpoints, for the fasthttp server (fast.go)
	hot     *ttlCache[hotRead]
	boardC  *ttlCache[topPage]  // the hot boards' Top-100s
	pages   *coalescer[topPage] // the page reads in flight, shared by identical ones
	good    *lastGood           // the last good answers, for a Redis outage
	timeout time.Duration
	fastCtx deadlines // the fasthttp requests' deadlines (of timeout)
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
	s.fastCtx.timeout = s.timeout
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
	s.routes = routes{
		stepsBoard:     s.route("GET /v1/boards/steps", s.stepsBoard),
		stepsMember:    s.route("GET /v1/boards/steps/members/{member}", s.stepsMember),
		scoreBoard:     s.route("GET /v1/boards/{board}", s.scoreBoard),
		scoreMember:    s.route("GET /v1/boards/{board}/members/{member}", s.scoreMember),
		hotSearch:      s.route("GET /v1/hot/search", s.hotSearch),
		friendsSteps:   s.route("GET /v1/friends/{user}/steps", s.friendsSteps),
		friendsOfBoard: s.route("GET /v1/friends/{user}/boards/{board}", s.friendsOfBoard),
	}
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

// request is what a read endpoint takes from an HTTP request: its path's wildcards ("" where
// its pattern has none) and its raw query string.
type request struct {
	board, member, user string
	query               string
}

// endpoint is a read endpoint: a value to answer (a jsonAppender, or a value for
// encoding/json) or an error.
type endpoint func(context.Context, request) (any, error)

// route is a read endpoint with its pattern and the pattern's metrics.
type route struct {
	pattern string
	h       endpoint
	observe *obs.HTTPRoute
}

// routes are the read endpoints by pattern.
type routes struct {
	stepsBoard, stepsMember, scoreBoard, scoreMember, hotSearch, friendsSteps, friendsOfBoard *route
}

// route registers h at pattern on the net/http mux and returns it for the fasthttp server.
func (s *Server) route(pattern string, h endpoint) *route {
	rt := &route{pattern: pattern, h: h, observe: obs.NewHTTPRoute(pattern)}
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		uri := r.RequestURI
		if uri == "" { // a request built in the process, not read from a client
			uri = r.URL.RequestURI()
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.timeout)
		code, v := s.answer(r.Context(), ctx, rt.h, request{board: r.PathValue("board"), member: r.PathValue("member"), user: r.PathValue("user"),
			query: r.URL.RawQuery}, uri, r.URL.Path)
		cancel()
		if a, ok := v.(jsonAppender); ok {
			writeJSON(w, code, a)
		} else {
			if code == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "1")
			}
			obs.WriteJSON(w, code, v)
		}
		rt.observe.Observe(code, time.Since(start))
	})
	return rt
}

// answer runs h with ctx, the deadline of its Redis calls (s.timeout, ending sooner if parent
// does), and returns the status and the value to write as JSON (a jsonAppender, or a value
// for encoding/json; a 503 also gets Retry-After). Errors that are not an *apiError are Redis
// failures: the last good answer of the same request URI, marked stale, if the server holds
// one (a successful answer is kept as such), else 503 with a short reason, logged at most
// once a second. parent ends when the client goes away (net/http; never on fasthttp, where
// the deadline alone bounds the work).
func (s *Server) answer(parent, ctx context.Context, h endpoint, r request, uri, path string) (int, any) {
	start := time.Now()
	v, err := h(ctx, r)
	var ae *apiError
	if err != nil && !errors.As(err, &ae) && parent.Err() == nil {
		if old, ok := s.good.get(uri, time.Now()); ok {
			s.errLog.Log(parent, s.log, slog.LevelWarn, "query: redis read failed; answering the last good copy", "path", path, "err", err)
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
	if err == nil {
		return http.StatusOK, v
	}
	if !errors.As(err, &ae) {
		ae = s.unavailable(parent, path, err)
	}
	return ae.code, map[string]string{"error": cut(ae.msg, maxReason)}
}

// unavailable is the answer to a failed Redis read: 503 with a short reason. The full error
// goes to the log, at most once a second (with the count of those not logged).
func (s *Server) unavailable(ctx context.Context, path string, err error) *apiError {
	if ctx.Err() != nil { // the client went away: nothing to tell anyone
		return &apiError{http.StatusServiceUnavailable, "request cancelled"}
	}
	s.errLog.Log(ctx, s.log, slog.LevelError, "query: redis read failed", "path", path, "err", err)
	if rsredis.IsTimeout(err) {
		return &apiError{http.StatusServiceUnavailable, fmt.Sprintf("redis did not answer within %s; retry", s.timeout)}
	}
	return &apiError{http.StatusServiceUnavailable, "redis unavailable; retry"}
}
