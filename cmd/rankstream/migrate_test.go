package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/internal/testenv"
)

// TestMigrateCommand runs `rankstream migrate` in-process against the real ClickHouse: the
// first run creates the three tables, the second creates nothing; the database comes from
// the environment.
func TestMigrateCommand(t *testing.T) {
	addr, database := testenv.ClickHouseAddr(t)
	t.Setenv("RANKSTREAM_CLICKHOUSE_DATABASE", database)
	migrate := func() (int, string, string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var stdout, stderr bytes.Buffer
		code := dispatch(ctx, []string{"migrate", "--clickhouse", addr, "--log-level", "warn"}, strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	code, out, errOut := migrate()
	if code != 0 {
		t.Fatalf("first migrate: exit %d, stderr:\n%s", code, errOut)
	}
	for _, table := range []string{"topk_history", "user_daily_steps", "board_archive", "board_member_scores"} {
		if !strings.Contains(out, "created table "+database+"."+table) {
			t.Errorf("first migrate does not say it created %s:\n%s", table, out)
		}
	}
	if strings.Contains(out, "created database") {
		t.Errorf("first migrate created the database that existed:\n%s", out)
	}

	code, out, errOut = migrate()
	if want := "database " + database + " is up to date: nothing to create\n"; code != 0 || out != want {
		t.Fatalf("second migrate: exit %d, stdout %q, stderr:\n%s\nwant exit 0 and %q", code, out, errOut, want)
	}
}

// TestMigrateCommandFailures: an unreachable server, a bad database name or flag value exit 1
// with the reason.
func TestMigrateCommandFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, tc := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"--clickhouse", "127.0.0.1:1"}, 1, "clickhouse sink: ping 127.0.0.1:1"},
		{[]string{"--clickhouse-database", "no-dashes"}, 1, `database name "no-dashes"`},
		{[]string{"--topk-retention-days", "soon"}, 1, "invalid value"},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(ctx, append([]string{"migrate"}, tc.args...), strings.NewReader(""), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.say) {
			t.Errorf("migrate %q: exit %d, stderr %q; want exit %d saying %q", tc.args, code, stderr.String(), tc.code, tc.say)
		}
	}
}
