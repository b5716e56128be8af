package clickhouse

import (
	"errors"
	"testing"
	"time"
)

// TestDailyStepsLargestWins writes a day's growing values, the same value reached earlier
// (from a report that arrived late, naming a region), then late retries of the older, smaller
// value and of the same value reached later: the largest value reached earliest stays, once,
// under FINAL and argMax.
func TestDailyStepsLargestWins(t *testing.T) {
	ctx := testContext(t)
	s, conn := migrated(t)
	sydney := time.FixedZone("AEDT", 11*3600)
	// 23:30 in Sydney on 30 November is 12:30 UTC the same day; 00:30 on 1 December is
	// 13:30 UTC on 30 November: the local date is what is stored.
	day := time.Date(2026, 11, 30, 23, 30, 0, 0, sydney)
	next := time.Date(2026, 12, 1, 0, 30, 0, 0, sydney)
	at := func(min int) time.Time { return time.Date(2026, 11, 30, 12, min, 0, 0, time.UTC) }
	older := []DailyStepsRow{{UserID: "u1", Day: day, Steps: 500, UpdatedAt: at(1)}}
	for _, batch := range [][]DailyStepsRow{
		older,
		{{UserID: "u1", Day: day, Steps: 800, UpdatedAt: at(2)}, {UserID: "u2", Day: day, Steps: 90, UpdatedAt: at(3)}},
		{{UserID: "u1", Day: next, Steps: 40, UpdatedAt: at(50)}},
		{{UserID: "u1", Day: day, Steps: 800, Region: "eu", UpdatedAt: at(1)}},
		older, // retries that land last
		{{UserID: "u1", Day: day, Steps: 800, UpdatedAt: at(2)}},
	} {
		if err := s.WriteDailySteps(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		User   string    `ch:"user_id"`
		Day    time.Time `ch:"day"`
		Steps  uint32    `ch:"steps"`
		Region string    `ch:"region"`
		At     time.Time `ch:"updated_at"`
	}
	want := []row{
		{"u1", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), 800, "eu", at(1)},
		{"u1", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 40, "", at(50)},
		{"u2", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), 90, "", at(3)},
	}
	for _, q := range []string{
		"SELECT user_id, day, steps, region, updated_at FROM user_daily_steps FINAL ORDER BY user_id, day",
		`SELECT user_id, day, argMax(steps, version) AS steps, argMax(region, version) AS region, argMax(updated_at, version) AS updated_at
		FROM user_daily_steps GROUP BY user_id, day ORDER BY user_id, day`,
	} {
		var got []row
		if err := conn.Select(ctx, &got, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %+v, want %+v", q, got, want)
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.User != w.User || !g.Day.Equal(w.Day) || g.Steps != w.Steps || g.Region != w.Region || !g.At.Equal(w.At) {
				t.Errorf("%s: row %d = %+v, want %+v", q, i, g, w)
			}
		}
	}
}

// TestBoardArchiveLaterArchiveWins re-archives a period and then retries the first archive's
// batch: the later archive is what FINAL shows.
func TestBoardArchiveLaterArchiveWins(t *testing.T) {
	ctx := testContext(t)
	s, conn := migrated(t)
	archive := func(at time.Time, members ...string) []BoardArchiveRow {
		rows := make([]BoardArchiveRow, len(members))
		for i, m := range members {
			rows[i] = BoardArchiveRow{Board: "game", Period: "d:20261130", Rank: uint32(i + 1), Member: m,
				Score: int64(1000 - i), ArchivedAt: at}
		}
		return rows
	}
	t1 := time.Date(2026, 12, 1, 0, 0, 5, 0, time.UTC)
	first, second := archive(t1, "ann", "bob", "cid"), archive(t1.Add(time.Minute), "bob", "ann", "dan")
	for _, batch := range [][]BoardArchiveRow{first, second, first} {
		if err := s.WriteBoardArchive(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	var got []struct {
		Member string `ch:"member"`
	}
	if err := conn.Select(ctx, &got, "SELECT member FROM board_archive FINAL WHERE board = ? AND period = ? ORDER BY rank", "game", "d:20261130"); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Member != "bob" || got[1].Member != "ann" || got[2].Member != "dan" {
		t.Fatalf("archive = %+v, want bob, ann, dan", got)
	}
}

// TestMemberScoresLatestWins writes a member's scores out of order and again (a retry, a
// replay): the highest version, i.e. the member's latest state, is what FINAL and argMax
// show, once per (board, period, member); a reach time a DateTime cannot hold is refused
// before anything is written.
func TestMemberScoresLatestWins(t *testing.T) {
	ctx := testContext(t)
	s, conn := migrated(t)
	ms := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).UnixMilli()
	row := func(period string, score int64, reached int64, deleted bool, version uint64) MemberScoreRow {
		return MemberScoreRow{Board: "arena", Period: period, Member: "ann", Score: score, ReachedMs: reached, Scope: "eu", Deleted: deleted, Version: version}
	}
	late := []MemberScoreRow{row("d:20261130", 70, ms+5, false, 7), row("total", 170, ms+5, false, 7)}
	for _, batch := range [][]MemberScoreRow{
		late,
		{row("d:20261130", 30, ms+1, false, 3), row("total", 130, ms+1, false, 3)}, // an older state lands last
		{row("d:20261201", -4, ms+86_400_000, true, 9)},
		late, // a replay
	} {
		if err := s.WriteMemberScores(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	type got struct {
		Period  string    `ch:"period"`
		Score   int64     `ch:"score"`
		At      time.Time `ch:"reached_at"`
		Ms      int64     `ch:"reached_ms"`
		Deleted uint8     `ch:"deleted"`
	}
	want := []got{
		{"d:20261130", 70, time.UnixMilli(ms).UTC(), ms + 5, 0},
		{"d:20261201", -4, time.UnixMilli(ms + 86_400_000).UTC(), ms + 86_400_000, 1},
		{"total", 170, time.UnixMilli(ms).UTC(), ms + 5, 0},
	}
	for _, q := range []string{
		"SELECT period, score, reached_at, reached_ms, deleted FROM board_member_scores FINAL WHERE board = 'arena' AND member = 'ann' ORDER BY period",
		`SELECT period, argMax(score, version) AS score, argMax(reached_at, version) AS reached_at, argMax(reached_ms, version) AS reached_ms,
		argMax(deleted, version) AS deleted FROM board_member_scores WHERE board = 'arena' AND member = 'ann' GROUP BY period ORDER BY period`,
	} {
		var rows []got
		if err := conn.Select(ctx, &rows, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if len(rows) != len(want) {
			t.Fatalf("%s: %+v, want %+v", q, rows, want)
		}
		for i := range rows {
			if g, w := rows[i], want[i]; g.Period != w.Period || g.Score != w.Score || !g.At.Equal(w.At) || g.Ms != w.Ms || g.Deleted != w.Deleted {
				t.Errorf("%s: row %d = %+v, want %+v", q, i, g, w)
			}
		}
	}
	far := row("total", 1, time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), false, 10)
	if err := s.WriteMemberScores(ctx, []MemberScoreRow{row("total", 2, ms, false, 10), far}); !errors.Is(err, ErrInvalidRow) {
		t.Fatalf("a reach time in 2200: %v, want ErrInvalidRow", err)
	}
	if n := count(t, conn, "SELECT count() FROM board_member_scores FINAL WHERE period = 'total'"); n != 1 {
		t.Fatalf("%d total rows after a refused batch, want 1", n)
	}
}
