package api

import (
	"bufio"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestFastRoutesAsNetHTTP checks the fasthttp server's router against net/http's mux with the
// same patterns: every request it routes itself goes to the endpoint net/http's mux picks,
// with the same path values and raw query; the others (unclean, escaped, other methods) it
// leaves to net/http.
func TestFastRoutesAsNetHTTP(t *testing.T) {
	s := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	type routed struct {
		pattern string
		r       request
	}
	var got routed
	mux := http.NewServeMux()
	all := []*route{s.routes.stepsBoard, s.routes.stepsMember, s.routes.scoreBoard, s.routes.scoreMember, s.routes.hotSearch,
		s.routes.friendsSteps, s.routes.friendsOfBoard}
	for _, rt := range all {
		mux.HandleFunc(rt.pattern, func(_ http.ResponseWriter, r *http.Request) {
			got = routed{rt.pattern, request{board: r.PathValue("board"), member: r.PathValue("member"), user: r.PathValue("user"), query: r.URL.RawQuery}}
		})
	}
	for _, tt := range []struct {
		method, uri string
		fast        bool // routed by the fasthttp server itself
	}{
		{"GET", "/v1/boards/steps", true},
		{"GET", "/v1/boards/steps?day=20261130&limit=20", true},
		{"GET", "/v1/boards/steps?", true},
		{"GET", "/v1/boards/steps?a=b?c#d", true},
		{"GET", "/v1/boards/steps?region=%zz;x", true},
		{"GET", "/v1/boards/steps/members/m001?neighbors=5", true},
		{"GET", "/v1/boards/arena?period=total&limit=20", true},
		{"GET", "/v1/boards/arena/members/m-1_2.3~4", true},
		{"GET", "/v1/boards/steps/members/...x", true},
		{"GET", "/v1/hot/search?k=10", true},
		{"GET", "/v1/friends/u1/steps?day=20261130", true},
		{"GET", "/v1/friends/u1/boards/arena?period=total", true},
		{"GET", "/v1/friends/u1/boards/steps", true},
		{"GET", "/v1/boards/steps/members", false}, // 404
		{"GET", "/v1/boards/steps/", false},
		{"GET", "/v1/boards//steps", false},
		{"GET", "/v1/boards/./steps", false},
		{"GET", "/v1/boards/../boards/steps", false},
		{"GET", "/v1/boards/steps/members/a%00b", false},
		{"GET", "/v1/boards/a%2Fb", false},
		{"GET", "/v1/boards/a:b", false},
		{"GET", "/v1/boards/steps/members/m1/x", false},
		{"GET", "/v1/hot/search/x", false},
		{"GET", "/v1/friends/u1", false},
		{"GET", "/v1/friends/u1/boards", false},
		{"GET", "/v1/boards/steps?x=\x7f", false},
		{"GET", "/v2/boards/steps", false},
		{"GET", "/healthz", false},
		{"GET", "http://host/v1/boards/steps", false},
		{"HEAD", "/v1/boards/steps", false},
		{"POST", "/v1/boards/steps", false},
	} {
		rt, r, ok := s.routes.match(tt.method == "GET", tt.uri)
		if ok != tt.fast {
			t.Errorf("%s %q: routed by fasthttp %v, want %v", tt.method, tt.uri, ok, tt.fast)
		}
		if !ok {
			continue
		}
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(tt.method + " " + tt.uri + " HTTP/1.1\r\nHost: x\r\n\r\n")))
		if err != nil {
			t.Fatalf("%q: net/http refuses it: %v", tt.uri, err)
		}
		got = routed{}
		mux.ServeHTTP(discard{}, req)
		if want := (routed{rt.pattern, r}); got != want {
			t.Errorf("%s %q: fasthttp routes it to %+v, net/http to %+v", tt.method, tt.uri, want, got)
		}
	}
}

type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}
