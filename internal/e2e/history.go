package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/rankstream/rankstream/internal/testenv"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
)

// History is a ClickHouse database of the test's own on the real clickhouse-server, its schema
// migrated: a sink on it, a connection for the test's own queries, and the flags that point
// `rankstream process` at it. NewHistory opens it and the test's cleanup closes and drops it.
type History struct {
	Addr, Database string
	Sink           *rsclickhouse.Sink
	Conn           driver.Conn
}

// NewHistory opens a History (a minute at most).
func NewHistory(t testing.TB) *History {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := &History{}
	h.Conn, h.Database = testenv.ClickHouse(t) // skips or fails without a server
	h.Addr = os.Getenv(testenv.EnvClickHouse)
	sink, err := rsclickhouse.Open(ctx, h.Addr, h.Database)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Close() })
	if _, err := sink.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	h.Sink = sink
	return h
}

// Flags are `rankstream process`'s flags writing the history to h.
func (h *History) Flags() []string {
	return []string{"--history", "--clickhouse", h.Addr, "--clickhouse-database", h.Database}
}
