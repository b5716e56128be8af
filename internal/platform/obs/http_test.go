package obs_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/rankstream/rankstream/internal/platform/obs"
)

// slack is what a loaded machine may add to a timeout before its effect is seen.
const slack = time.Second

// start serves h with limits l on a loopback port until the test ends.
func start(t *testing.T, h http.Handler, l obs.ServerLimits) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := obs.NewServer(h, l)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestDefaultServerLimitsAreBounded: the tests below shorten timeouts to watch them work;
// this checks that the defaults every server runs with are set and bounded.
func TestDefaultServerLimitsAreBounded(t *testing.T) {
	l := obs.DefaultServerLimits
	for _, c := range []struct {
		name   string
		d, max time.Duration
	}{
		{"ReadHeader", l.ReadHeader, 10 * time.Second},
		{"Read", l.Read, 30 * time.Second},
		{"Write", l.Write, time.Minute},
		{"Idle", l.Idle, 2 * time.Minute},
	} {
		if c.d <= 0 || c.d > c.max {
			t.Errorf("default %s timeout %s, want in (0, %s]", c.name, c.d, c.max)
		}
	}
	if l.Write <= 30*time.Second {
		t.Errorf("default write timeout %s: /debug/pprof/profile refuses its default 30 s profile", l.Write)
	}
	if l.MaxHeaderBytes <= 0 || l.MaxHeaderBytes > 1<<20 || l.MaxConcurrent <= 0 || l.MaxConcurrent > 4096 {
		t.Errorf("default limits %+v unbounded", l)
	}
	srv := obs.NewServer(http.NotFoundHandler(), l)
	if srv.ReadHeaderTimeout != l.ReadHeader || srv.ReadTimeout != l.Read || srv.WriteTimeout != l.Write ||
		srv.IdleTimeout != l.Idle || srv.MaxHeaderBytes != l.MaxHeaderBytes {
		t.Errorf("server does not carry the limits: %+v", srv)
	}
}

// TestIdleConnectionsClosed: 200 keep-alive connections that send one request and then
// nothing, half of them never reading their answer, are all closed by the server after the
// idle timeout (before the fix they stayed open indefinitely).
func TestIdleConnectionsClosed(t *testing.T) {
	l := obs.DefaultServerLimits
	l.Idle = 300 * time.Millisecond
	addr := start(t, obs.Mux(func(context.Context) error { return nil }), l)

	const conns = 200
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for i := range conns {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			sent := time.Now()
			if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				t.Error(err)
				return
			}
			if i%2 == 0 { // a client that reads its answer and keeps the connection
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil || resp.StatusCode != 200 {
					t.Errorf("healthz: %v %v", resp, err)
					return
				}
				resp.Body.Close()
			}
			// Whatever is left unread, then the end of the connection.
			c.SetReadDeadline(sent.Add(l.Idle + l.Write + slack))
			_, err = io.Copy(io.Discard, c)
			took := time.Since(sent)
			if err != nil {
				t.Errorf("connection %d not closed by the server %s after its request: %v", i, took, err)
			}
			mu.Lock()
			slowest = max(slowest, took)
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("%d idle connections closed, the last %s after its request (idle timeout %s)", conns, slowest.Round(time.Millisecond), l.Idle)
}

// TestSlowReadersCutOff: 20 clients that ask for a large answer and never read it are cut
// off after the write timeout (before the fix they held their connection and handler
// indefinitely).
func TestSlowReadersCutOff(t *testing.T) {
	l := obs.DefaultServerLimits
	l.Write = 500 * time.Millisecond
	chunk := []byte(strings.Repeat("x", 64<<10))
	ended := make(chan time.Duration, 20)
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		began := time.Now()
		var err error
		for written := 0; err == nil && written < 1<<30; written += len(chunk) {
			_, err = w.Write(chunk)
		}
		if err == nil {
			t.Error("1 GiB written to a client that reads nothing")
		}
		ended <- time.Since(began)
	}), l)

	for range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.(*net.TCPConn).SetReadBuffer(4 << 10)
		t.Cleanup(func() { c.Close() })
		if _, err := io.WriteString(c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
	}
	var slowest time.Duration
	for range 20 {
		select {
		case took := <-ended:
			slowest = max(slowest, took)
		case <-time.After(l.Write + 5*slack):
			t.Fatalf("a handler writing to a client that reads nothing still runs %s after the write timeout", 5*slack)
		}
	}
	if slowest > l.Write+slack {
		t.Errorf("slow readers cut off after up to %s, write timeout %s", slowest, l.Write)
	}
	t.Logf("20 slow readers cut off, the last %s after its request (write timeout %s)", slowest.Round(time.Millisecond), l.Write)
}

func counter(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func gauge(g prometheus.Gauge) float64 {
	var m dto.Metric
	if err := g.Write(&m); err != nil {
		panic(err)
	}
	return m.GetGauge().GetValue()
}

// TestConcurrencyCap: with the default cap of requests in flight all taken by slow
// handlers, the next request gets 503 with Retry-After at once, counted; once the slow ones
// end, requests are served again.
func TestConcurrencyCap(t *testing.T) {
	l := obs.DefaultServerLimits
	release := make(chan struct{})
	addr := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		io.WriteString(w, "ok")
	}), l)
	rejected := obs.HTTPRejected.WithLabelValues("concurrency")
	before := counter(rejected)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: l.MaxConcurrent + 1}}
	defer client.CloseIdleConnections()
	get := func(path string) (*http.Response, string, error) {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b), nil
	}
	var wg sync.WaitGroup
	for range l.MaxConcurrent {
		wg.Go(func() {
			if resp, body, err := get("/slow"); err != nil || resp.StatusCode != 200 {
				t.Errorf("a request within the cap: %v %s %v", resp, body, err)
			}
		})
	}
	for deadline := time.Now().Add(10 * time.Second); gauge(obs.HTTPInFlight) < float64(l.MaxConcurrent); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			close(release)
			t.Fatalf("%v requests in flight, want %d", gauge(obs.HTTPInFlight), l.MaxConcurrent)
		}
	}
	began := time.Now()
	resp, body, err := get("/fast")
	took := time.Since(began)
	close(release)
	wg.Wait()
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" ||
		!strings.Contains(body, "too many concurrent requests") || took > slack {
		t.Fatalf("request over the cap: %v %q %v after %s, want 503 with Retry-After at once", resp, body, err, took)
	}
	if n := counter(rejected) - before; n != 1 {
		t.Errorf("rankstream_http_rejected_total rose by %v, want 1", n)
	}
	if resp, _, err := get("/fast"); err != nil || resp.StatusCode != 200 {
		t.Errorf("after the slow requests ended: %v %v", resp, err)
	}
	t.Logf("request over the cap of %d refused in %s", l.MaxConcurrent, took)
}

// TestReadyzAnswersWithinItsTimeout: a readiness check that never returns (a dependency that
// ignores its context) still gets /readyz its answer after ReadyTimeout.
func TestReadyzAnswersWithinItsTimeout(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	addr := start(t, obs.Mux(func(context.Context) error { <-stuck; return errors.New("unreachable") }), obs.DefaultServerLimits)
	began := time.Now()
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	took := time.Since(began)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "no answer within 1s") ||
		took < obs.ReadyTimeout || took > obs.ReadyTimeout+slack {
		t.Fatalf("/readyz = %d %s after %s, want 503 after %s", resp.StatusCode, body, took, obs.ReadyTimeout)
	}
}
