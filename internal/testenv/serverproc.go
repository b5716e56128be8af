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
// While it is stopped, its port stays taken (hold): a server of another test picking a free
// port would otherwise get it, and the clients of this one, meant to find it down, would talk
// to that one (seen once: "ready while the broker is down").
type serverProc struct {
	t    testing.TB
	name string // e.g. "redis-server on port 6379", for messages
	port int    // the port clients dial
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd exited
	held int           // the socket holding port while stopped (0: none)
}

// start starts cmd and calls ready every poll until it returns nil. The test fails when the
// process exits first or is not ready within timeout; logs returns what to show then.
func (p *serverProc) start(cmd *exec.Cmd, timeout, poll time.Duration, ready func() error, logs func() string) {
	p.t.Helper()
	p.release()
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
	p.hold()
}

// hold takes the stopped server's port with a socket bound to it that does not listen: a
// client's connection is refused, as by a server that is down, and no other socket can bind
// the port, not even one bound to port 0 (FreeAddr, any server picking a free port). When
// connections of the stopped server linger in TIME_WAIT on the port, that bind needs
// SO_REUSEADDR, and then another socket setting it too may still share the port.
func (p *serverProc) hold() {
	if p.port == 0 || p.held != 0 {
		return
	}
	for _, reuse := range []int{0, 1} {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			p.t.Logf("testenv: %s: hold its port: %v", p.name, err)
			return
		}
		err = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, reuse)
		if err == nil {
			err = syscall.Bind(fd, &syscall.SockaddrInet4{Port: p.port, Addr: [4]byte{127, 0, 0, 1}})
		}
		if err == nil {
			p.held = fd
			return
		}
		_ = syscall.Close(fd)
		if reuse == 1 {
			p.t.Logf("testenv: %s: hold its port: %v", p.name, err)
		}
	}
}

// release frees the port hold took, for the server to bind it.
func (p *serverProc) release() {
	if p.held != 0 {
		_ = syscall.Close(p.held)
		p.held = 0
	}
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
