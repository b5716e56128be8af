package servee2e

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"testing"
)

// bareHTTPArg as the test binary's first argument makes it the bare HTTP server on the address
// that follows (TestMain), a process of its own beside serve's.
const bareHTTPArg = "bare-http"

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == bareHTTPArg {
		fmt.Fprintln(os.Stderr, bareHTTP(os.Args[2]))
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// bareHTTP serves the cheapest HTTP/1.1 the read benchmarks' lean client accepts: a goroutine
// per connection reads a request's head (a GET has no body) and writes a fixed 200 of two
// bytes, one read and one write of the network a request. A closed loop through it measures
// what the HTTP hop costs a Go server and its client on this machine whatever the server
// does, the floor under serve's own hop (hopPath). It returns only on a failed listen or
// accept.
func bareHTTP(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go bareConn(c)
	}
}

var bareAnswer = []byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")

func bareConn(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 16<<10)
	for {
		for { // the request line and headers, to the blank line
			line, err := r.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) <= 2 {
				break
			}
		}
		if _, err := c.Write(bareAnswer); err != nil {
			return
		}
	}
}
