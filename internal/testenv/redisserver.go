package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisServer is a redis-server of one test's own, for fault injection (kill -9, SIGSTOP,
// restart) that must not disturb the shared server of RANKSTREAM_TEST_REDIS. It keeps its port
// and data folder across restarts and persists with AOF (appendfsync always), like a
// production Redis that comes back with what it acknowledged.
type RedisServer struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	proc serverProc
}

// StartRedisServer starts a private redis-server on a free loopback port and stops it when the
// test ends. Like the shared servers, it needs `make test` (or Debian's redis-server
// installed): without the binary the test is skipped, or fails under RequireServers.
func StartRedisServer(t testing.TB) *RedisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		noServer(t, "testenv: no redis-server binary for a private server: "+err.Error())
	}
	port := freePort(t)
	s := &RedisServer{t: t, bin: bin, dir: t.TempDir(), port: port,
		proc: serverProc{t: t, name: fmt.Sprintf("redis-server on port %d", port), port: port}}
	t.Cleanup(func() { s.Kill(); s.proc.release() })
	s.Start()
	return s
}

// Addr is the server's host:port.
func (s *RedisServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Client returns a client of the server, closed when the test ends.
func (s *RedisServer) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	s.t.Cleanup(func() { _ = c.Close() })
	return c
}

// Start starts the server (again, after Kill) on its port and data folder and waits until it
// answers PING.
func (s *RedisServer) Start() {
	s.t.Helper()
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer c.Close()
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", s.dir,
		"--logfile", filepath.Join(s.dir, "server.log"))
	s.proc.start(cmd, 20*time.Second, 20*time.Millisecond, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		return c.Ping(ctx).Err()
	}, func() string {
		log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
		return string(log)
	})
}

// Kill ends the server with SIGKILL (a crash: acknowledged writes survive through the AOF) and
// waits until it is gone. Killing a stopped server is a no-op.
func (s *RedisServer) Kill() { s.proc.stop(syscall.SIGKILL) }

// Pause stops the server with SIGSTOP: it keeps its connections but answers nothing, like a
// server stuck in a long command or a swapped-out host. Resume undoes it.
func (s *RedisServer) Pause() { s.proc.signal(syscall.SIGSTOP) }

// Resume continues a paused server (SIGCONT).
func (s *RedisServer) Resume() { s.proc.signal(syscall.SIGCONT) }
