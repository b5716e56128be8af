package testenv

import (
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// serverProc is the process of a private server (StartRedisServer, StartClickHouseServer,
// StartKafkaServer): started and waited for until it answers, signalled, stopped, started again.
type serverProc struct {
	t    testing.TB
	name string // e.g. "redis-server on port 6379", for messages
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd exited
}

// start starts cmd and calls ready every poll until it returns nil. The test fails when the
// process exits first or is not ready within timeout; logs returns what to show then.
func (p *serverProc) start(cmd *exec.Cmd, timeout, poll time.Duration, ready func() error, logs func() string) {
	p.t.Helper()
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("testenv: start %s: %v", p.name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done = cmd, done
	go func() { _ = cmd.Wait(); close(done) }()
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return
		}
		select {
		case <-done:
			p.t.Fatalf("testenv: private %s exited:\n%s", p.name, logs())
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("testenv: private %s does not answer: %v\n%s", p.name, err, logs())
		}
		time.Sleep(poll)
	}
}

// stop ends the process with sig (SIGTERM: a clean shutdown; SIGKILL: a crash) and waits
// until it is gone; after a minute a SIGTERM becomes SIGKILL. Stopping a stopped server is a
// no-op.
func (p *serverProc) stop(sig syscall.Signal) {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	p.cmd = nil
}

// signal sends sig to a running process (SIGSTOP, SIGCONT); the test fails if it cannot.
func (p *serverProc) signal(sig syscall.Signal) {
	if p.cmd == nil {
		return
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		select {
		case <-p.done:
		default:
			p.t.Errorf("testenv: %s: signal %v: %v", p.name, sig, err)
		}
	}
}

// FreeAddr returns a loopback host:port whose port is free right now, for a server the test
// starts (rarely, another process takes the port first).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func freePort(t testing.TB) int {
	t.Helper()
	_, port, _ := net.SplitHostPort(FreeAddr(t))
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatalf("testenv: free port: %v", err)
	}
	return n
}
