package obs

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ReadyTimeout bounds /readyz: the readiness check gets this long, and /readyz answers "not
// ready" when it ends, whatever the check is still doing.
const ReadyTimeout = time.Second

// Mux returns a mux with /metrics, /healthz (the process is up), /readyz (ready reports no
// error within ReadyTimeout: the service's dependencies answer) and Go's /debug/pprof/
// profiles.
func Mux(ready func(context.Context) error) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	mux.Handle("GET /metrics", promhttp.Handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), ReadyTimeout)
		defer cancel()
		done := make(chan error, 1) // the check may outlive the answer; it must not block then
		go func() { done <- ready(ctx) }()
		var err error
		select {
		case err = <-done:
		case <-ctx.Done():
			err = fmt.Errorf("no answer within %s", ReadyTimeout)
		}
		if err != nil {
			w.Header().Set("Retry-After", "1")
			WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "error": err.Error()})
			return
		}
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	})
	return mux
}

// WriteJSON writes v as a JSON response with the status code.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// ServerLimits bound what one client can hold of an HTTP server.
type ServerLimits struct {
	// ReadHeader bounds reading a request's headers (slow-header clients).
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included.
	Read time.Duration
	// Write bounds the time from the end of the request's headers to the end of the response:
	// a client that does not read its response is cut off after it.
	Write time.Duration
	// Idle closes a keep-alive connection that sends no new request for this long.
	Idle time.Duration
	// MaxHeaderBytes bounds the request line and headers (a longer URL gets 431).
	MaxHeaderBytes int
	// MaxConcurrent caps the requests served at once; the next ones get 503 at once, with
	// Retry-After, counted in rankstream_http_rejected_total.
	MaxConcurrent int
}

// DefaultServerLimits are the limits of every rankstream HTTP server (serve, dev, and the
// metrics server of process). Write must exceed the slowest handler: /debug/pprof/profile
// (30 s by default) and /trace refuse a ?seconds= at or above it.
var DefaultServerLimits = ServerLimits{
	ReadHeader:     5 * time.Second,
	Read:           10 * time.Second,
	Write:          35 * time.Second,
	Idle:           60 * time.Second,
	MaxHeaderBytes: 64 << 10,
	MaxConcurrent:  256,
}

// Metrics of the HTTP servers' limits.
var (
	HTTPInFlight = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "rankstream_http_in_flight", Help: "HTTP requests being served now (those refused by the concurrency cap not included).",
	})
	HTTPRejected = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_http_rejected_total", Help: "HTTP requests refused with 503 before being served, by reason (concurrency: the cap on concurrent requests was reached).",
	}, []string{"reason"})
)

// NewServer returns an HTTP server of h with the limits l.
func NewServer(h http.Handler, l ServerLimits) *http.Server {
	return &http.Server{
		Handler:           Limit(h, l.MaxConcurrent),
		ReadHeaderTimeout: l.ReadHeader,
		ReadTimeout:       l.Read,
		WriteTimeout:      l.Write,
		IdleTimeout:       l.Idle,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}

// Limit serves at most n requests of h at once and answers the others 503 at once, with
// Retry-After and a short JSON reason; each refusal is counted in HTTPRejected.
func Limit(h http.Handler, n int) http.Handler {
	l := NewLimiter(n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !l.Enter() {
			w.Header().Set("Retry-After", "1")
			WriteJSON(w, http.StatusServiceUnavailable, BusyAnswer)
			return
		}
		defer l.Leave()
		h.ServeHTTP(w, r)
	})
}

// BusyAnswer is the JSON reason of a request refused by a Limiter.
var BusyAnswer = map[string]string{"error": "too many concurrent requests; retry"}

// Limiter caps the requests a server serves at once (Limit; the fasthttp server of the query
// API), counted in HTTPInFlight.
type Limiter struct {
	slots    chan struct{}
	rejected prometheus.Counter
}

// NewLimiter returns a Limiter of n requests at once.
func NewLimiter(n int) *Limiter {
	if n <= 0 {
		panic(fmt.Sprintf("BUG: obs.Limit: %d concurrent requests", n))
	}
	return &Limiter{slots: make(chan struct{}, n), rejected: HTTPRejected.WithLabelValues("concurrency")}
}

// Enter takes a slot for a request, false when none is free: the request is then counted in
// HTTPRejected and must be answered 503 with Retry-After and BusyAnswer. After true, Leave
// when the request is answered.
func (l *Limiter) Enter() bool {
	select {
	case l.slots <- struct{}{}:
		HTTPInFlight.Inc()
		return true
	default:
		l.rejected.Inc()
		return false
	}
}

// Leave frees the slot of a request Enter let in.
func (l *Limiter) Leave() {
	HTTPInFlight.Dec()
	<-l.slots
}
