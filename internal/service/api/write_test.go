package api_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// countingListener counts the writes to the connections it accepts.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{c, &l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestFastServerWritesABoardAnswerAtOnce: the largest board answers (a Top-100 page, a
// standing with 50 neighbours, 9-10 KB here) leave the server in one write each, not a partial
// copy and a flush then the rest (fasthttp's default 4 KiB write buffer).
func TestFastServerWritesABoardAnswerAtOnce(t *testing.T) {
	rdb := testenv.Redis(t)
	seed(t, rdb, 1500)
	s := api.New(rsredis.NewBatchedReader(rdb), slog.New(slog.NewTextHandler(io.Discard, nil)), api.WithBoardCacheTTL(0))
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &countingListener{Listener: inner}
	srv := s.FastServer(s, obs.DefaultServerLimits)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for _, path := range []string{
		"/v1/boards/steps?day=20261130&limit=100",
		"/v1/boards/steps?day=20261130&offset=900&limit=100",
		"/v1/boards/steps/members/m700?day=20261130&neighbors=50",
	} {
		before := ln.writes.Load()
		if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(body) < 8000 {
			t.Fatalf("GET %s: %d, %d bytes, %v", path, resp.StatusCode, len(body), err)
		}
		if n := ln.writes.Load() - before; n != 1 {
			t.Errorf("GET %s: %d bytes in %d writes, want 1", path, len(body), n)
		}
	}
}
