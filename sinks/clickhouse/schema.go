package clickhouse

import (
	"fmt"
	"strconv"
	"strings"
)

// column is one column of a table: its name and ClickHouse type.
type column struct{ name, typ string }

// table describes one table of the contract; its DDL, its INSERT and Migrate's check are all
// generated from this description.
type table struct {
	name        string
	sink        string // the sink label of its metrics
	columns     []column
	version     string // the ReplacingMergeTree version column
	partitionBy string // "" for one partition
	orderBy     string // the row's identity
	ttlColumn   string // the DateTime the retention counts from; "" for no TTL
}

// The tables of the contract (see the package documentation for their versions).
var (
	topkHistory = table{
		name: "topk_history",
		sink: "clickhouse-topk",
		columns: []column{
			{"stream", "String"},
			{"window_start", "DateTime('UTC')"},
			{"window_end", "DateTime('UTC')"},
			{"rank", "UInt32"},
			{"item", "String"},
			{"count", "UInt64"},
			{"error", "UInt64"},
			{"version", "UInt64"},
		},
		version:     "version",
		partitionBy: "toYYYYMM(window_end)",
		orderBy:     "stream, window_end, rank",
		ttlColumn:   "window_end",
	}
	userDailySteps = table{
		name: "user_daily_steps",
		sink: "clickhouse-steps",
		columns: []column{
			{"user_id", "String"},
			{"day", "Date"},
			{"steps", "UInt32"},
			{"region", "String"},
			{"updated_at", "DateTime('UTC')"},
			{"version", "UInt64"},
		},
		version:     "version",
		partitionBy: "toYYYYMM(day)",
		orderBy:     "user_id, day",
	}
	// boardArchive has no date in its key, so it is not partitioned: partitions by
	// archived_at would put a later archive of a period beside, not over, the earlier one.
	boardArchive = table{
		name: "board_archive",
		sink: "clickhouse-archive",
		columns: []column{
			{"board", "String"},
			{"period", "String"},
			{"rank", "UInt32"},
			{"member", "String"},
			{"score", "Int64"},
			{"archived_at", "DateTime('UTC')"},
		},
		version: "archived_at",
		orderBy: "board, period, rank",
	}
	// boardMemberScores is every member's score on every period of a declared board, as it
	// changes; its key holds no date either (the period is a string, total has none).
	boardMemberScores = table{
		name: "board_member_scores",
		sink: "clickhouse-member-scores",
		columns: []column{
			{"board", "String"},
			{"period", "String"},
			{"member", "String"},
			{"score", "Int64"},
			{"reached_at", "DateTime('UTC')"},
			{"reached_ms", "Int64"},
			{"scope", "String"},
			{"deleted", "UInt8"},
			{"version", "UInt64"},
		},
		version: "version",
		orderBy: "board, period, member",
	}
	tables = []*table{&topkHistory, &userDailySteps, &boardArchive, &boardMemberScores}
)

// createSQL is the table's CREATE TABLE IF NOT EXISTS in database db; rows expire ttlDays
// after their ttlColumn, or never if ttlDays is 0 (always 0 on servers without TTL).
func (t *table) createSQL(db string, ttlDays int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE IF NOT EXISTS %s.%s (\n", db, t.name)
	for i, c := range t.columns {
		sep := ","
		if i == len(t.columns)-1 {
			sep = ""
		}
		fmt.Fprintf(&b, "    %s %s%s\n", c.name, c.typ, sep)
	}
	fmt.Fprintf(&b, ") ENGINE = ReplacingMergeTree(%s)\n", t.version)
	if t.partitionBy != "" {
		fmt.Fprintf(&b, "PARTITION BY %s\n", t.partitionBy)
	}
	fmt.Fprintf(&b, "ORDER BY (%s)", t.orderBy)
	if t.ttlColumn != "" && ttlDays > 0 {
		fmt.Fprintf(&b, "\nTTL %s + INTERVAL %d DAY", t.ttlColumn, ttlDays)
	}
	return b.String()
}

// insertSQL is the INSERT that PrepareBatch takes, every column named (18.16 needs them).
func (t *table) insertSQL(db string) string {
	names := make([]string, len(t.columns))
	for i, c := range t.columns {
		names[i] = c.name
	}
	return fmt.Sprintf("INSERT INTO %s.%s (%s)", db, t.name, strings.Join(names, ", "))
}

// serverVersion is the major and minor version of a ClickHouse server.
type serverVersion struct{ major, minor int }

// parseVersion parses what SELECT version() returns, e.g. "18.16.1" or "24.8.4.13".
func parseVersion(s string) (serverVersion, error) {
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return serverVersion{}, fmt.Errorf("server version %q: want major.minor[.patch...]", s)
	}
	major, err := strconv.Atoi(parts[0])
	if err != nil {
		return serverVersion{}, fmt.Errorf("server version %q: %w", s, err)
	}
	minor, err := strconv.Atoi(parts[1])
	if err != nil {
		return serverVersion{}, fmt.Errorf("server version %q: %w", s, err)
	}
	return serverVersion{major, minor}, nil
}

// hasTTL reports whether the server knows table TTL clauses (added in 19.6).
func (v serverVersion) hasTTL() bool {
	return v.major > 19 || v.major == 19 && v.minor >= 6
}

func (v serverVersion) String() string { return fmt.Sprintf("%d.%d", v.major, v.minor) }
