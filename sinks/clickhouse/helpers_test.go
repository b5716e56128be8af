package clickhouse

import (
	"context"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/rankstream/rankstream/internal/testenv"
)

// migrated returns a Sink on a fresh, migrated database of the real server, and a
// connection whose default database is that one, as an analyst's would be.
func migrated(t testing.TB) (*Sink, driver.Conn) {
	t.Helper()
	ctx := testContext(t)
	s, addr, database := opened(t)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := clickhouse.Open(&clickhouse.Options{
		Protocol: clickhouse.Native,
		Addr:     []string{addr},
		Auth:     clickhouse.Auth{Database: database, Username: "default"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return s, conn
}

// testContext is cancelled when the test ends or after a minute.
func testContext(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// exec runs a statement, failing the test on error.
func exec(t testing.TB, conn driver.Conn, query string, args ...any) {
	t.Helper()
	if err := conn.Exec(testContext(t), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// count runs a query that returns one count.
func count(t testing.TB, conn driver.Conn, query string, args ...any) uint64 {
	t.Helper()
	var n uint64
	if err := conn.QueryRow(testContext(t), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// opened returns a Sink on a fresh database of the real server, not migrated, with the
// server's address and the database's name.
func opened(t testing.TB) (s *Sink, addr, database string) {
	t.Helper()
	addr, database = testenv.ClickHouseAddr(t)
	s, err := Open(testContext(t), addr, database)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s, addr, database
}
