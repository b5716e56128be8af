package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// stallSlack is what a loaded machine may add to a deadline before the answer is back.
const stallSlack = time.Second

// TestRedisStoppedWithSIGSTOP stops a private redis-server with SIGSTOP (it keeps its
// connections and answers nothing) under the query API with every default (the client of
// rsredis.OpenReader, DefaultRedisTimeout, the binary's server limits). Before the fix a
// board read answered after 35 s, a member read never, and 60 concurrent reads piled up.
// Now: waves of 60 concurrent requests across the endpoints each answer within their deadline
// (plus slack): the reads seen before the stop with their last good copy marked stale, one
// never seen with 503 and a reason, /readyz not ready; nothing piles up from wave to wave; and
// after SIGCONT the answers are fresh within a second.
func TestRedisStoppedWithSIGSTOP(t *testing.T) {
	rs := testenv.StartRedisServer(t)
	ctx := context.Background()
	rdb, err := rsredis.OpenReader(rs.Addr(), api.DefaultRedisTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	srv := serve(t, api.New(rsredis.NewBatchedReader(rdb), slog.New(slog.NewTextHandler(io.Discard, nil))))
	writer := rs.Client()
	seed(t, writer, 30)
	hot := rsredis.NewHotWriter(writer)
	write(t, hot, hotSnap(0, 5))

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}, Timeout: time.Minute}
	t.Cleanup(client.CloseIdleConnections)
	paths := []string{"/v1/boards/steps?day=20261130&limit=5", "/v1/boards/steps/members/m010?day=20261130&neighbors=2", "/v1/hot/search?k=3"}
	unseen := "/v1/boards/steps/members/m011?day=20261130&neighbors=2"
	for _, p := range append(paths, "/readyz") {
		if code, _, _ := fetch(client, srv.URL+p); code != 200 {
			t.Fatalf("GET %s = %d before the stop", p, code)
		}
	}
	lastRead := time.Now()
	client.CloseIdleConnections()
	base := runtime.NumGoroutine()

	rs.Pause()
	t.Cleanup(rs.Resume)
	// The hot-search cache serves what it read for DefaultHotCacheTTL: past it, Redis is asked.
	time.Sleep(time.Until(lastRead.Add(api.DefaultHotCacheTTL)))

	for wave := range 3 {
		start := time.Now()
		var wg sync.WaitGroup
		var mu sync.Mutex
		slowest := map[string]time.Duration{}
		for i := range 60 {
			path, deadline, want, reason := "/readyz", obs.ReadyTimeout, http.StatusServiceUnavailable, `"status":"not ready"`
			switch {
			case i%5 < 3:
				path, deadline, want, reason = paths[i%5], api.DefaultRedisTimeout, http.StatusOK, `"stale":true,"stale_age_ms":`
			case i%5 == 3: // never answered before: no last good copy
				path, deadline, reason = unseen, api.DefaultRedisTimeout, "redis did not answer within 500ms"
			}
			wg.Go(func() {
				code, body, took := fetch(client, srv.URL+path)
				mu.Lock()
				slowest[path] = max(slowest[path], took)
				mu.Unlock()
				if code != want || took > deadline+stallSlack || (code != 200 && len(body) > maxErrorBody) || !strings.Contains(string(body), reason) {
					t.Errorf("wave %d: GET %s = %d after %s (deadline %s): %.200s", wave, path, code, took, deadline, body)
				}
			})
		}
		if code, _, took := fetch(client, srv.URL+"/healthz"); code != 200 || took > stallSlack {
			t.Errorf("wave %d: /healthz = %d after %s", wave, code, took)
		}
		wg.Wait()
		t.Logf("wave %d: 60 requests answered in %s, slowest by path %v", wave, time.Since(start).Round(time.Millisecond), slowest)
		waitFor(t, "no request in flight", func() bool { return gauge(obs.HTTPInFlight) == 0 })
		client.CloseIdleConnections()
		// A request stuck on Redis holds a handler's goroutine and its connection's: one
		// wave stuck would leave over 60 more. (The server's goroutines of the connections
		// just closed by the client end as soon as it sees the close.)
		waitFor(t, fmt.Sprintf("goroutines back near the %d before the stop", base), func() bool { return runtime.NumGoroutine() <= base+10 })
		ps := rdb.PoolStats()
		t.Logf("wave %d: %d goroutines (%d before the stop); Redis pool: %d connections (%d idle), %d pool timeouts, %d waits",
			wave, runtime.NumGoroutine(), base, ps.TotalConns, ps.IdleConns, ps.Timeouts, ps.WaitCount)
		if limit := uint32(10*runtime.GOMAXPROCS(0) + goredis.DefaultPipelinePoolSize); ps.TotalConns > limit {
			t.Errorf("wave %d: %d Redis connections, above the pools' %d", wave, ps.TotalConns, limit)
		}
	}

	// Writes sent while Redis is stopped land at SIGCONT; the reads must see them within 1 s.
	fresh := make(chan error, 2)
	go func() {
		c := board.DayComposite(day)
		v, err := c.Encode(1_000_000, day.FirstInstant().UnixMilli()+1)
		if err == nil {
			err = writer.ZAdd(ctx, rsredis.StepsGlobalBoard(day), goredis.Z{Score: v, Member: "fresh"}).Err()
		}
		fresh <- err
	}()
	go func() {
		_, err := hot.Write(ctx, hotSnap(5, 5))
		fresh <- err
	}()
	time.Sleep(100 * time.Millisecond) // the writes reach the stopped server's socket
	resumed := time.Now()
	rs.Resume()
	for _, tt := range []struct {
		path string
		ok   func([]byte) bool
	}{
		{"/v1/boards/steps?day=20261130&limit=1", func(b []byte) bool {
			var p api.Page
			return json.Unmarshal(b, &p) == nil && len(p.Items) == 1 && p.Items[0].Member == "fresh" && p.Total == 31
		}},
		{"/v1/boards/steps/members/fresh?day=20261130", func(b []byte) bool {
			var s api.Standing
			return json.Unmarshal(b, &s) == nil && s.Member.Rank == 1
		}},
		{"/v1/hot/search", func(b []byte) bool {
			var s topics.TopKSnapshot
			return json.Unmarshal(b, &s) == nil && s.WindowEnd.Second() == 5
		}},
		{"/readyz", func(b []byte) bool { return strings.Contains(string(b), `"ready"`) }},
	} {
		for {
			code, body, _ := fetch(client, srv.URL+tt.path)
			if code == 200 && tt.ok(body) {
				break
			}
			if time.Since(resumed) > time.Second {
				t.Fatalf("GET %s %s after SIGCONT: %d %.200s, want a fresh answer within 1 s", tt.path, time.Since(resumed), code, body)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Logf("every endpoint fresh %s after SIGCONT", time.Since(resumed).Round(time.Millisecond))
	for range 2 {
		if err := <-fresh; err != nil {
			t.Fatalf("write sent during the stop: %v", err)
		}
	}

	// A Redis that is gone (connections refused) is answered the same way.
	rs.Kill()
	for _, p := range append(paths[:2], unseen) { // (hot search may still answer from its cache)
		code, body, took := fetch(client, srv.URL+p)
		want, reason := http.StatusOK, `"stale":true`
		if p == unseen {
			want, reason = http.StatusServiceUnavailable, "retry"
		}
		if code != want || took > api.DefaultRedisTimeout+stallSlack || !strings.Contains(string(body), reason) {
			t.Errorf("GET %s with Redis gone = %d after %s: %.200s", p, code, took, body)
		}
	}
}

// fetch GETs url and returns the status (0 on a transport error), the body and the time taken.
func fetch(c *http.Client, url string) (int, []byte, time.Duration) {
	start := time.Now()
	resp, err := c.Get(url)
	if err != nil {
		return 0, []byte(err.Error()), time.Since(start)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, body, time.Since(start)
}

func gauge(g prometheus.Gauge) float64 {
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		panic(err)
	}
	return m.GetGauge().GetValue()
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 5 s for: %s", what)
		}
	}
}
