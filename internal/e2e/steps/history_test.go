package stepse2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/rankstream/rankstream/internal/testenv"
	"github.com/rankstream/rankstream/processors/steps"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
)

// TestStepsHistory: 20k reports (2k users, duplicates, stale readings) through `rankstream
// process --history` with the default history interval: user_daily_steps under FINAL holds
// exactly one row per user-day with the truth's largest value, its reach time (to the second)
// and region, and the analyst queries agree with the truth. Then the history is replayed
// (`rankstream replay --group steps-history --to-start`, every day written again): still one
// visible row per user-day, equal to the truth.
func TestStepsHistory(t *testing.T) {
	testenv.EachKafka(t, func(t *testing.T, brokers []string) {
		t.Parallel()
		e := newE2E(t, brokers)
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
		defer cancel()
		conn, db := testenv.ClickHouse(t)
		sink, err := rsclickhouse.Open(ctx, os.Getenv(testenv.EnvClickHouse), db)
		if err != nil {
			t.Fatal(err)
		}
		defer sink.Close()
		if _, err := sink.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		history := []string{"--history", "--clickhouse", os.Getenv(testenv.EnvClickHouse), "--clickhouse-database", db}
		records, want := generate(11, 20_000, 2_000, time.Now())

		first := e.Start("first", history...)
		e.produce(records, 0)
		e.waitExact(want, 2*time.Minute)
		historyCaughtUp(t, e, 3*time.Minute)
		sameHistory(t, ctx, conn, db, want)
		checkAnalystQueries(t, ctx, conn, want)
		first.Signal(syscall.SIGTERM)
		if err := first.Wait(); err != nil {
			t.Fatalf("the first run did not stop cleanly: %v\n%s", err, first.Output())
		}
		e.Processes = nil

		replay := testenv.StartProcess(t, "replay", e.Bin, append([]string{"replay", "--group", "steps-history", "--to-start"}, e.KafkaFlags()...)...)
		if err := replay.Wait(); err != nil {
			t.Fatalf("replay: %v\n%s", err, replay.Output())
		}
		group := string(e.Kafka.Names.Group(steps.HistoryGroup))
		if got := testenv.Committed(testenv.KafkaAdmin(t, brokers), group, string(e.Kafka.Names.Table(steps.Group))); got != 0 {
			t.Fatalf("after the replay %s committed %d records, want 0", group, got)
		}
		e.Start("replayed", history...)
		historyCaughtUp(t, e, 3*time.Minute)
		sameHistory(t, ctx, conn, db, want)
	})
}

// historyCaughtUp waits until the group steps-history committed the whole steps table (it
// commits after ClickHouse took the rows).
func historyCaughtUp(t *testing.T, e *stepsRun, timeout time.Duration) {
	t.Helper()
	table := string(e.Kafka.Names.Table(steps.Group))
	testenv.WaitCommitted(t, e.Admin.Admin(), string(e.Kafka.Names.Group(steps.HistoryGroup)), table, e.Count(table), timeout)
}

type historyRow struct {
	User    string    `ch:"user_id"`
	Day     time.Time `ch:"day"`
	Steps   uint32    `ch:"steps"`
	Region  string    `ch:"region"`
	Updated time.Time `ch:"updated_at"`
}

// sameHistory checks that user_daily_steps under FINAL is the truth, one row per user-day.
func sameHistory(t *testing.T, ctx context.Context, conn driver.Conn, db string, want truth) {
	t.Helper()
	var rows []historyRow
	if err := conn.Select(ctx, &rows, "SELECT user_id, day, steps, region, updated_at FROM "+db+".user_daily_steps FINAL"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	bad := 0
	for _, r := range rows {
		k := r.Day.Format("20060102") + "/" + r.User
		w, ok := want[k]
		switch {
		case seen[k]:
			t.Errorf("%s: a second visible row", k)
		case !ok:
			t.Errorf("%s: a row the truth has not: %+v", k, r)
		case int64(r.Steps) != w.steps || r.Region != w.region || r.Updated.Unix() != w.reached/1000:
			if bad++; bad <= 5 {
				t.Errorf("%s: %d steps in %q reached %s, want %d in %q reached %s", k, r.Steps, r.Region, r.Updated.UTC(),
					w.steps, w.region, time.UnixMilli(w.reached).UTC())
			}
		}
		seen[k] = true
	}
	if len(rows) != len(want) || bad > 0 || t.Failed() {
		t.Fatalf("%d visible rows (%d wrong), want %d", len(rows), bad, len(want))
	}
	t.Logf("user_daily_steps: %d rows under FINAL, all equal to the truth", len(rows))
}

// checkAnalystQueries runs the steps queries of sinks/clickhouse against the truth: one
// user's month, and one region's daily median and top 1% threshold.
// conn's default database is the test's.
func checkAnalystQueries(t *testing.T, ctx context.Context, conn driver.Conn, want truth) {
	t.Helper()
	user, region := "user-00007", testRegions[0]
	var month time.Time
	var wantDays []string
	byDay := map[string][]int64{}
	for k, v := range want {
		day, u := k[:8], k[9:]
		if u == user {
			wantDays = append(wantDays, fmt.Sprintf("%s %d", day, v.steps))
			month, _ = time.Parse("20060102", day)
		}
		if v.region == region {
			byDay[day] = append(byDay[day], v.steps)
		}
	}
	if len(wantDays) == 0 {
		t.Fatalf("the truth has no day of %s", user)
	}
	slices.Sort(wantDays)
	var days []historyRow
	if err := conn.Select(ctx, &days, rsclickhouse.QueryUserMonth, user, month); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range days {
		got = append(got, fmt.Sprintf("%s %d", d.Day.Format("20060102"), d.Steps))
	}
	// The truth spans three days that may straddle a month: keep the queried month's.
	wantMonth := slices.DeleteFunc(wantDays, func(s string) bool { return s[:6] != month.Format("200601") })
	if !slices.Equal(got, wantMonth) {
		t.Errorf("QueryUserMonth(%s, %s) = %q, want %q", user, month.Format("2006-01"), got, wantMonth)
	}

	var stats []struct {
		Day    time.Time `ch:"day"`
		Users  uint64    `ch:"users"`
		Median uint32    `ch:"median_steps"`
		Top1   uint32    `ch:"top1_threshold"`
	}
	from, to := time.Now().AddDate(0, 0, -7), time.Now().AddDate(0, 0, 2)
	if err := conn.Select(ctx, &stats, rsclickhouse.QueryRegionDays, from, to, region); err != nil {
		t.Fatal(err)
	}
	if len(stats) != len(byDay) {
		t.Fatalf("QueryRegionDays: %d days, the truth has %d", len(stats), len(byDay))
	}
	for _, s := range stats {
		vals := byDay[s.Day.Format("20060102")]
		slices.Sort(vals)
		// quantileExact(q) is the value at index floor(q × n) of the sorted values.
		at := func(q float64) int64 { return vals[min(int(q*float64(len(vals))), len(vals)-1)] }
		if s.Users != uint64(len(vals)) || int64(s.Median) != at(0.5) || int64(s.Top1) != at(0.99) {
			t.Errorf("QueryRegionDays %s: %d users, median %d, top 1%% from %d; want %d, %d, %d",
				s.Day.Format("2006-01-02"), s.Users, s.Median, s.Top1, len(vals), at(0.5), at(0.99))
		}
	}
}
