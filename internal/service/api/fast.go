package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/rankstream/rankstream/internal/platform/obs"
)

// The query API on fasthttp: net/http's per-request work (a background read per request, its
// deadlines, a Request and a response with their header maps) was about 80% of serve's CPU
// on the board reads. The read endpoints are served natively when a request's shape is plain
// (a GET whose path is made of plain segments and whose query has no control byte: every
// request the pages and clients send); everything else (other methods, escaped or unclean
// paths, the pages, /metrics, health, pprof) goes to the net/http handler through
// fasthttpadaptor, so that net/http's mux still decides the 404s, 405s and redirects. The
// answers are the same bytes, statuses and headers (Content-Type, Cache-Control, Retry-After)
// as net/http's.

// FastServer returns the server of `rankstream serve`: s's read endpoints served natively,
// every other request by next (which must route the API's paths to s, like the binary's mux),
// with the limits l: ReadHeader bounds reading a request (serve takes no request bodies: its
// requests are headers only), Write the writing of an answer, Idle a keep-alive connection's
// wait; a request line and headers longer than MaxHeaderBytes (plus net/http's 4 KiB of slack)
// get 431; MaxConcurrent as obs.Limit.
func (s *Server) FastServer(next http.Handler, l obs.ServerLimits) *FastServer {
	slow := fasthttpadaptor.NewFastHTTPHandler(next)
	lim := obs.NewLimiter(l.MaxConcurrent)
	return &FastServer{srv: &fasthttp.Server{
		Handler: func(c *fasthttp.RequestCtx) {
			if !lim.Enter() {
				writeFast(c, http.StatusServiceUnavailable, obs.BusyAnswer)
				return
			}
			defer lim.Leave()
			uri := string(c.Request.Header.RequestURI())
			if rt, r, ok := s.routes.match(c.IsGet(), uri); ok {
				start := time.Now()
				path, _, _ := strings.Cut(uri, "?")
				code, v := s.answer(context.Background(), s.fastCtx.at(start), rt.h, r, uri, path)
				writeFast(c, code, v)
				rt.observe.Observe(code, time.Since(start))
				return
			}
			if _, err := url.ParseRequestURI(uri); err != nil { // net/http's answer to a request line it cannot parse
				c.SetConnectionClose()
				c.Error("400 Bad Request", http.StatusBadRequest)
				return
			}
			slow(c)
		},
		ReadTimeout:    l.ReadHeader,
		WriteTimeout:   l.Write,
		IdleTimeout:    l.Idle,
		ReadBufferSize: l.MaxHeaderBytes + 4096,
		// An answer that fits the write buffer goes out in one write. With fasthttp's 4 KiB
		// a Top-100 page or a standing with 50 neighbours (9-15 KB) took two (a partial
		// copy, a flush, the rest), and fasthttp's writev for large answers needs a bare
		// *net.TCPConn, which lingerListener's connections are not. The buffer is held only
		// while an answer is written.
		WriteBufferSize: maxBoardAnswer,
		// The query API reads no request body; fasthttp reads one whole before the handler
		// (net/http leaves it unread), so a body beyond this gets 413.
		MaxRequestBodySize:    l.MaxHeaderBytes,
		NoDefaultServerHeader: true,
		// fasthttp keeps a goroutine per connection served, idle ones for this long for the
		// next connection (10 s by default): a burst of connections leaves no more behind it
		// than net/http does once they close.
		MaxIdleWorkerDuration: time.Second,
		Logger:                slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}}
}

// maxBoardAnswer is the fasthttp server's write buffer: more than any board page or standing
// (at most 101 rows) of member ids up to 64 bytes.
const maxBoardAnswer = 32 << 10

// FastServer is the query API's server on fasthttp (Server.FastServer).
type FastServer struct{ srv *fasthttp.Server }

// Serve serves the connections of ln until Shutdown, then returns nil.
func (f *FastServer) Serve(ln net.Listener) error { return f.srv.Serve(lingerListener{ln}) }

// Shutdown stops accepting connections, closes the idle ones and waits for the others to end
// their request, or for ctx to end.
func (f *FastServer) Shutdown(ctx context.Context) error { return f.srv.ShutdownWithContext(ctx) }

// lingerListener's connections close as net/http closes one after refusing a request it did
// not read to the end (a 431): the write side first, then the whole connection after
// lingerFor, so that the answer reaches a client still sending its request instead of being
// lost to the reset that closing a socket with unread data sends at once.
type lingerListener struct{ net.Listener }

// lingerFor is net/http's rstAvoidanceDelay.
const lingerFor = 500 * time.Millisecond

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		return lingerConn{tc}, nil
	}
	return c, err
}

type lingerConn struct{ *net.TCPConn }

func (c lingerConn) Close() error {
	if err := c.CloseWrite(); err != nil {
		return c.TCPConn.Close()
	}
	// A client that closed first (the usual end of a keep-alive connection) has sent its EOF
	// already: the read returns at once.
	go func() {
		_ = c.SetReadDeadline(time.Now().Add(lingerFor))
		_, _ = io.Copy(io.Discard, c.TCPConn)
		_ = c.TCPConn.Close()
	}()
	return nil
}

// match finds the read endpoint of a request and its wildcards and query: for a GET whose
// path is /v1/... of plain segments ([A-Za-z0-9._~-], none of them "." or "..") and whose
// query has no control byte, the endpoint net/http's mux would route it to, with the same
// path values and raw query. ok is false for any other request.
func (rs routes) match(get bool, uri string) (rt *route, r request, ok bool) {
	path, query, _ := strings.Cut(uri, "?")
	rest, found := strings.CutPrefix(path, "/v1/")
	if !get || !found || !plainQuery(query) {
		return nil, r, false
	}
	var seg [5]string
	n := 0
	for rest != "" {
		if n == len(seg) {
			return nil, r, false
		}
		var s string
		s, rest, found = strings.Cut(rest, "/")
		if !plainSegment(s) || found && rest == "" {
			return nil, r, false
		}
		seg[n] = s
		n++
	}
	r.query = query
	switch {
	case seg[0] == "boards" && n == 2 && seg[1] == "steps":
		return rs.stepsBoard, r, true
	case seg[0] == "boards" && n == 2:
		r.board = seg[1]
		return rs.scoreBoard, r, true
	case seg[0] == "boards" && n == 4 && seg[2] == "members" && seg[1] == "steps":
		r.member = seg[3]
		return rs.stepsMember, r, true
	case seg[0] == "boards" && n == 4 && seg[2] == "members":
		r.board, r.member = seg[1], seg[3]
		return rs.scoreMember, r, true
	case seg[0] == "hot" && n == 2 && seg[1] == "search":
		return rs.hotSearch, r, true
	case seg[0] == "friends" && n == 3 && seg[2] == "steps":
		r.user = seg[1]
		return rs.friendsSteps, r, true
	case seg[0] == "friends" && n == 4 && seg[2] == "boards":
		r.user, r.board = seg[1], seg[3]
		return rs.friendsOfBoard, r, true
	}
	return nil, r, false
}

// plainSegment tells whether a path segment is non-empty, neither "." nor "..", and only of
// unreserved characters: one that net/http neither unescapes nor cleans.
func plainSegment(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// plainQuery tells whether a raw query has no ASCII control byte (which net/url refuses).
func plainQuery(q string) bool {
	for i := 0; i < len(q); i++ {
		if q[i] < 0x20 || q[i] == 0x7f {
			return false
		}
	}
	return true
}

// fastJSON and noStoreValue are the header values of every JSON answer.
var (
	fastJSON     = []byte("application/json")
	noStoreValue = []byte("no-store")
)

// writeFast writes v as writeJSON (a jsonAppender) or obs.WriteJSON (any other value) do,
// with the same status, headers and bytes, and Retry-After on a 503.
func writeFast(c *fasthttp.RequestCtx, code int, v any) {
	c.SetStatusCode(code)
	h := &c.Response.Header
	h.SetContentTypeBytes(fastJSON)
	h.SetBytesV("Cache-Control", noStoreValue)
	if code == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	if a, ok := v.(jsonAppender); ok {
		// The answer is written into the response's own (pooled) body buffer.
		b := c.Response.SwapBody(nil)
		c.Response.SwapBody(append(a.appendJSON(b[:0]), '\n'))
		return
	}
	_ = json.NewEncoder(c.Response.BodyWriter()).Encode(v)
}
