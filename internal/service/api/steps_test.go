package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

const day = board.Day(20261130)

// seed puts n members on the day's global board: member m%03d has 10*(n-i) steps, so m000
// leads; m005 and m006 tie on steps and m006 reached them first.
func seed(t *testing.T, rdb *goredis.Client, n int) {
	t.Helper()
	c := board.DayComposite(day)
	base := day.FirstInstant().UnixMilli() + 3600_000
	var zs []goredis.Z
	for i := range n {
		steps, reached := int64(10*(n-i)), base+int64(i)
		switch i {
		case 5:
			steps, reached = int64(10*(n-5)), base+100
		case 6:
			steps, reached = int64(10*(n-5)), base+50
		}
		v, err := c.Encode(steps, reached)
		if err != nil {
			t.Fatal(err)
		}
		zs = append(zs, goredis.Z{Score: v, Member: fmt.Sprintf("m%03d", i)})
	}
	if err := rdb.ZAdd(context.Background(), rsredis.StepsGlobalBoard(day), zs...).Err(); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, srv *testServer, path string, wantCode int, v any) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantCode {
		t.Fatalf("GET %s = %d %s, want %d", path, resp.StatusCode, body, wantCode)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v: %s", path, err, body)
		}
	}
}

func newServer(t *testing.T) (*testServer, *goredis.Client) {
	rdb := testenv.Redis(t)
	return serve(t, api.New(rsredis.NewBatchedReader(rdb), slog.New(slog.NewTextHandler(io.Discard, nil)))), rdb
}

// testServer is a query API served on a free port of the loopback interface.
type testServer struct{ URL string }

// serve serves s like the binary does: its FastServer with obs.DefaultServerLimits, s itself
// answering what the fast path passes on.
func serve(t *testing.T, s *api.Server) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := s.FastServer(s, obs.DefaultServerLimits)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		if err := srv.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &testServer{URL: "http://" + ln.Addr().String()}
}

func TestStepsBoardPages(t *testing.T) {
	srv, rdb := newServer(t)
	seed(t, rdb, 1500)

	var p api.Page
	get(t, srv, "/v1/boards/steps?day=20261130&limit=10", 200, &p)
	if p.Total != 1500 || len(p.Items) != 10 || p.Items[0].Member != "m000" || p.Items[0].Rank != 1 || p.Items[0].Score != 15000 {
		t.Fatalf("first page: %+v", p)
	}
	if p.Items[5].Member != "m006" || p.Items[6].Member != "m005" || p.Items[5].Score != p.Items[6].Score {
		t.Fatalf("tie not broken by who reached first: %+v %+v", p.Items[5], p.Items[6])
	}
	get(t, srv, "/v1/boards/steps?day=20261130&offset=20&limit=5", 200, &p)
	if len(p.Items) != 5 || p.Items[0].Rank != 21 || p.Items[0].Member != "m020" {
		t.Fatalf("offset page: %+v", p.Items)
	}
	get(t, srv, "/v1/boards/steps?day=20261130&limit=5000", 200, &p)
	if len(p.Items) != api.MaxLimit {
		t.Fatalf("limit not capped: %d items", len(p.Items))
	}
	get(t, srv, "/v1/boards/steps?day=20261130&offset=99999&limit=1", 200, &p)
	if p.Offset != api.MaxOffset || p.Items[0].Rank != api.MaxOffset+1 {
		t.Fatalf("offset not capped: %+v", p)
	}
	get(t, srv, "/v1/boards/steps?day=20261129", 200, &p)
	if p.Total != 0 || len(p.Items) != 0 {
		t.Fatalf("empty day: %+v", p)
	}
	get(t, srv, "/v1/boards/steps?day=2026-11-30", 400, nil)
	get(t, srv, "/v1/boards/steps?day=20261130&limit=-1", 400, nil)
	get(t, srv, "/v1/boards/steps?tz=Nowhere/City", 400, nil)
}

func TestStepsMemberWithNeighbours(t *testing.T) {
	srv, rdb := newServer(t)
	seed(t, rdb, 50)

	var s api.Standing
	get(t, srv, "/v1/boards/steps/members/m010?day=20261130&neighbors=2", 200, &s)
	if s.Member.Rank != 11 || s.Member.Score != 400 || s.Total != 50 {
		t.Fatalf("member: %+v", s)
	}
	if len(s.Above) != 2 || s.Above[0].Member != "m008" || s.Above[1].Member != "m009" || len(s.Below) != 2 || s.Below[0].Member != "m011" {
		t.Fatalf("neighbours: above %+v below %+v", s.Above, s.Below)
	}
	get(t, srv, "/v1/boards/steps/members/m000?day=20261130&neighbors=3", 200, &s)
	if s.Member.Rank != 1 || len(s.Above) != 0 || len(s.Below) != 3 {
		t.Fatalf("leader: %+v", s)
	}
	get(t, srv, "/v1/boards/steps/members/m049?day=20261130&neighbors=3", 200, &s)
	if s.Member.Rank != 50 || len(s.Above) != 3 || len(s.Below) != 0 {
		t.Fatalf("last: %+v", s)
	}
	get(t, srv, "/v1/boards/steps/members/nobody?day=20261130", 404, nil)
}

func TestHealthAndReadiness(t *testing.T) {
	srv, _ := newServer(t)
	get(t, srv, "/healthz", 200, nil)
	get(t, srv, "/readyz", 200, nil)
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("metrics: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestReadyzAsksWithReady: with WithReady, /readyz also requires the check (dev's processors)
// to pass, besides Redis answering.
func TestReadyzAsksWithReady(t *testing.T) {
	rdb := testenv.Redis(t)
	var notReady atomic.Bool
	notReady.Store(true)
	check := func() error {
		if notReady.Load() {
			return errors.New("steps: starting")
		}
		return nil
	}
	srv := serve(t, api.New(rsredis.NewBatchedReader(rdb), slog.New(slog.NewTextHandler(io.Discard, nil)), api.WithReady(check)))
	get(t, srv, "/readyz", http.StatusServiceUnavailable, nil)
	notReady.Store(false)
	get(t, srv, "/readyz", http.StatusOK, nil)
}
