package testenv

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// ClickHouse returns a native-protocol connection to the real
// clickhouse-server announced in RANKSTREAM_TEST_CLICKHOUSE, whose default
// database is a fresh one of this test's own (see ClickHouseAddr), and that
// database's name. The connection is closed when the test ends.
//
// The server is Debian's ClickHouse 18.16: see INFRA.md for what it lacks
// (always name the columns in PrepareBatch; never Exec an INSERT ... VALUES).
func ClickHouse(t testing.TB) (driver.Conn, string) {
	t.Helper()
	addr, database := ClickHouseAddr(t)
	conn, err := openClickHouse(addr, database)
	if err != nil {
		t.Fatalf("testenv: clickhouse-server %s (%s): %v", addr, EnvClickHouse, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn, database
}

// ClickHouseAddr creates a database t_<random> on the real clickhouse-server
// and returns the server's native-protocol address and the database name,
// e.g. for a child process. The database is dropped when the test ends.
// Without RANKSTREAM_TEST_CLICKHOUSE the test is skipped (or fails if
// RequireServers).
func ClickHouseAddr(t testing.TB) (addr, database string) {
	t.Helper()
	addr = serverAddr(t, EnvClickHouse, "clickhouse-server")
	database = fmt.Sprintf("t_%016x", rand.Uint64())

	ctx, cancel := context.WithTimeout(context.Background(), pingTimeout)
	defer cancel()
	if err := execClickHouse(ctx, addr, "CREATE DATABASE "+database); err != nil {
		t.Fatalf("testenv: clickhouse-server %s (%s): %v", addr, EnvClickHouse, err)
	}
	t.Cleanup(func() {
		// A loaded server (the whole suite on two cores) can take minutes to drop a database
		// of thousands of parts. The database has a name of its own and the test servers are
		// removed after the run, so a slow drop is reported, not counted against the test.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := execClickHouse(ctx, addr, "DROP DATABASE IF EXISTS "+database); err != nil {
			t.Logf("testenv: cleanup (database left behind): %v", err)
		}
	})
	return addr, database
}

func openClickHouse(addr, database string) (driver.Conn, error) {
	conn, err := clickhouse.Open(&clickhouse.Options{
		Protocol:    clickhouse.Native,
		Addr:        []string{addr},
		Auth:        clickhouse.Auth{Database: database, Username: "default"},
		DialTimeout: pingTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("open database %q: %w", database, err)
	}
	return conn, nil
}

// execClickHouse runs one statement on the server's default database.
func execClickHouse(ctx context.Context, addr, query string) error {
	conn, err := openClickHouse(addr, "default")
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.Exec(ctx, query); err != nil {
		return fmt.Errorf("%s: %w", query, err)
	}
	return nil
}
