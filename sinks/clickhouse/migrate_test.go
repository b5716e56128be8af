package clickhouse

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rankstream/rankstream/internal/testenv"
)

// TestMigrateTwiceIsNoOp creates the database and the tables on the real server, then
// migrates again: nothing is created the second time and the tables are usable.
func TestMigrateTwiceIsNoOp(t *testing.T) {
	ctx := testContext(t)
	addr, own := testenv.ClickHouseAddr(t)
	database := own + "_m" // does not exist yet: Migrate creates it
	s, err := Open(ctx, addr, database)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.conn.Exec(testContext(t), "DROP DATABASE IF EXISTS "+database); err != nil {
			t.Errorf("cleanup: %v", err)
		}
		_ = s.Close()
	})

	created, err := s.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"database " + database,
		"table " + database + ".topk_history (no TTL: server 18.16 predates TTL)",
		"table " + database + ".user_daily_steps",
		"table " + database + ".board_archive",
		"table " + database + ".board_member_scores",
	}
	if v := serverVersionOf(t, s); v.hasTTL() {
		want[1] = "table " + database + ".topk_history (TTL 90 days)"
	}
	if !slices.Equal(created, want) {
		t.Fatalf("first Migrate created %q, want %q", created, want)
	}
	again, err := s.Migrate(ctx)
	if err != nil || len(again) != 0 {
		t.Fatalf("second Migrate = %q, %v; want nothing created", again, err)
	}
	if err := s.WriteTopK(ctx, snapshot("search", windowEnd(0), 1, "a", "b")); err != nil {
		t.Fatalf("write after migrate: %v", err)
	}
}

// TestMigrateRejectsForeignTable: a table of the contract's name with other columns is
// reported, not silently used.
func TestMigrateRejectsForeignTable(t *testing.T) {
	ctx := testContext(t)
	s, _, database := opened(t)
	if err := s.conn.Exec(ctx, "CREATE TABLE "+database+".user_daily_steps (user_id String, day Date, steps Int64) "+
		"ENGINE = ReplacingMergeTree() ORDER BY (user_id, day)"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Migrate(ctx)
	if !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("Migrate = %v, want ErrSchemaMismatch", err)
	}
	for _, want := range []string{"column steps is Int64, want UInt32", "no column updated_at", "no column version"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func serverVersionOf(t *testing.T, s *Sink) serverVersion {
	t.Helper()
	var raw string
	if err := s.conn.QueryRow(testContext(t), "SELECT version()").Scan(&raw); err != nil {
		t.Fatal(err)
	}
	v, err := parseVersion(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCreateSQLKeepsTTLForModernServers checks the DDL of both branches of the server-version
// check: the 18.16 server here only runs the branch without TTL.
func TestCreateSQLKeepsTTLForModernServers(t *testing.T) {
	for _, tc := range []struct {
		version string
		ttl     bool
	}{
		{"18.16.1", false},
		{"19.5.4.22", false},
		{"19.6.1.1", true},
		{"24.8.4.13", true},
		{"25.10.1.3832", true},
	} {
		v, err := parseVersion(tc.version)
		if err != nil {
			t.Fatal(err)
		}
		if v.hasTTL() != tc.ttl {
			t.Errorf("%s: hasTTL = %v, want %v", tc.version, v.hasTTL(), tc.ttl)
		}
	}
	for _, bad := range []string{"", "18", "x.16", "18.y.1"} {
		if _, err := parseVersion(bad); err == nil {
			t.Errorf("parseVersion(%q) succeeded", bad)
		}
	}

	const topkModern = `CREATE TABLE IF NOT EXISTS rs.topk_history (
    stream String,
    window_start DateTime('UTC'),
    window_end DateTime('UTC'),
    rank UInt32,
    item String,
    count UInt64,
    error UInt64,
    version UInt64
) ENGINE = ReplacingMergeTree(version)
PARTITION BY toYYYYMM(window_end)
ORDER BY (stream, window_end, rank)
TTL window_end + INTERVAL 30 DAY`
	if got := topkHistory.createSQL("rs", 30); got != topkModern {
		t.Errorf("topk_history DDL with TTL:\n%s\nwant:\n%s", got, topkModern)
	}
	if got, want := topkHistory.createSQL("rs", 0), strings.TrimSuffix(topkModern, "\nTTL window_end + INTERVAL 30 DAY"); got != want {
		t.Errorf("topk_history DDL without TTL:\n%s\nwant:\n%s", got, want)
	}
	if got := boardArchive.createSQL("rs", 30); strings.Contains(got, "TTL") || strings.Contains(got, "PARTITION") {
		t.Errorf("board_archive DDL has a TTL or partitions:\n%s", got)
	}
	if got, want := userDailySteps.insertSQL("rs"), "INSERT INTO rs.user_daily_steps (user_id, day, steps, region, updated_at, version)"; got != want {
		t.Errorf("insert = %q, want %q", got, want)
	}
}
