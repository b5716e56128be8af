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
	"sync"
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

// leanPool hands each closed-loop worker or open-model sender a connection of its own.
type leanPool struct {
	base string
	mu   sync.Mutex
	free []*leanConn
}

func (p *leanPool) take() *leanConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		c := p.free[n-1]
		p.free = p.free[:n-1]
		return c
	}
	return newLeanConn(p.base)
}

func (p *leanPool) put(c *leanConn) {
	p.mu.Lock()
	p.free = append(p.free, c)
	p.mu.Unlock()
}

// warm opens n connections and reads /healthz through each, so that an open-model run
// starts with connections open, as the raw side's go-redis pool does (warm from the closed
// loops): otherwise its first requests pay for dialling, and serve for accepting, beside the
// read, and with a few hundred of them in the first tens of milliseconds that is a run's p99.
func (p *leanPool) warm(n int) error {
	for range n {
		c := newLeanConn(p.base)
		if err := c.get("/healthz"); err != nil {
			c.close()
			return fmt.Errorf("lean client: warm up: %w", err)
		}
		p.put(c)
	}
	return nil
}

func (l *leanConn) close() {
	if l.c != nil {
		_ = l.c.Close()
		l.c = nil
	}
}

func (p *leanPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.free {
		c.close()
	}
	p.free = nil
}
