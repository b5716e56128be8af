package servee2e

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// leanConn is a minimal keep-alive HTTP/1.1 client on one TCP connection: it writes a GET and
// reads the status line, the headers (only Content-Length matters; serve never sends a
// chunked answer to these reads) and the body into a reused buffer. It is the serve side's
// counterpart of go-redis on the raw side: a client that costs the shared cores about what a
// RESP client does per request, where Go's net/http client (a goroutine pair, a Request and a
// Response with their header maps per call) costs several times more.
type leanConn struct {
	addr string // host:port
	c    net.Conn
	r    *bufio.Reader
	req  []byte
	body []byte
}

func newLeanConn(base string) *leanConn {
	return &leanConn{addr: strings.TrimPrefix(base, "http://")}
}

var errLeanStatus = errors.New("lean client: another status than expected")

// get sends GET path and reads its answer: an error for anything but a fresh 200 (a stale
// answer counts as a failure, as in get). A broken connection is dialled again on the next
// call.
func (l *leanConn) get(path string) error { return l.getWant(path, status200) }

var (
	status200 = []byte("HTTP/1.1 200 ")
	status400 = []byte("HTTP/1.1 400 ")
)

// getWant is get expecting the status line to begin with want instead of a 200's.
func (l *leanConn) getWant(path string, want []byte) error {
	if l.c == nil {
		c, err := net.DialTimeout("tcp", l.addr, 10*time.Second)
		if err != nil {
			return fmt.Errorf("lean client: dial: %w", err)
		}
		l.c, l.r = c, bufio.NewReaderSize(c, 16<<10)
	}
	err := l.roundTrip(path, want)
	if err != nil && !errors.Is(err, errLeanStatus) {
		_ = l.c.Close()
		l.c = nil
	}
	return err
}

func (l *leanConn) roundTrip(path string, want []byte) error {
	_ = l.c.SetDeadline(time.Now().Add(10 * time.Second))
	l.req = append(append(append(append(l.req[:0], "GET "...), path...), " HTTP/1.1\r\nHost: "...), l.addr...)
	l.req = append(l.req, "\r\n\r\n"...)
	if _, err := l.c.Write(l.req); err != nil {
		return fmt.Errorf("lean client: write: %w", err)
	}
	line, err := l.r.ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("lean client: status line: %w", err)
	}
	ok := bytes.HasPrefix(line, want)
	n, closing := -1, false
	for {
		h, err := l.r.ReadSlice('\n')
		if err != nil {
			return fmt.Errorf("lean client: header: %w", err)
		}
		if len(h) <= 2 { // the blank line
			break
		}
		name, val, _ := bytes.Cut(h, []byte(":"))
		val = bytes.TrimSpace(val)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if n, err = strconv.Atoi(string(val)); err != nil {
				return fmt.Errorf("lean client: content-length %q: %w", val, err)
			}
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(val, []byte("close")):
			closing = true
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return fmt.Errorf("lean client: transfer-encoding %q not supported", val)
		}
	}
	if n < 0 {
		return errors.New("lean client: no content-length")
	}
	if cap(l.body) < n {
		l.body = make([]byte, n)
	}
	l.body = l.body[:n]
	if _, err := io.ReadFull(l.r, l.body); err != nil {
		return fmt.Errorf("lean client: body: %w", err)
	}
	if closing {
		return errors.New("lean client: server closed the connection")
	}
	if !ok {
		return fmt.Errorf("%w: %s", errLeanStatus, bytes.TrimSpace(line))
	}
	if isStale(l.body) {
		return fmt.Errorf("lean client: GET %s: a stale answer", path)
	}
	return nil
}

// leanPool holds a fixed number of lean connections for the open-model senders: a sender
// takes one, waiting while none is free, as go-redis's pool makes the raw side's reads wait
// for one of its PoolSize connections. (A new connection whenever none was free let a burst
// dial thousands of them, each costing a connect and serve an accept beside the read: at half
// the raw rate serve's p99 then ran to seconds while the raw side queued in its pool.) The
// wait counts in a request's latency: openPaced times it from when it was due.
type leanPool struct{ free chan *leanConn }

// newLeanPool opens n connections to base and reads /healthz through each, so that an
// open-model run starts with its connections open, as the raw side's go-redis pool does (warm
// from the closed loops).
func newLeanPool(base string, n int) (*leanPool, error) {
	p := &leanPool{free: make(chan *leanConn, n)}
	for range n {
		c := newLeanConn(base)
		if err := c.get("/healthz"); err != nil {
			c.close()
			p.closeAll()
			return nil, fmt.Errorf("lean client: warm up: %w", err)
		}
		p.free <- c
	}
	return p, nil
}

func (p *leanPool) take() *leanConn { return <-p.free }

func (p *leanPool) put(c *leanConn) { p.free <- c }

func (l *leanConn) close() {
	if l.c != nil {
		_ = l.c.Close()
		l.c = nil
	}
}

// closeAll closes the connections in the pool (all of them once every sender put its back).
func (p *leanPool) closeAll() {
	for {
		select {
		case c := <-p.free:
			c.close()
		default:
			return
		}
	}
}
