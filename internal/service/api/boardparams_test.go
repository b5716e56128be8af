package api

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/topics"
)

func TestParseScoreBoardQuery(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want scoreQuery
		bad  string
	}{
		{raw: "", want: scoreQuery{Limit: 20}},
		{raw: "period=d&scope=eu&offset=5&limit=7", want: scoreQuery{Period: board.PeriodDay, Scope: "eu", Offset: 5, Limit: 7}},
		{raw: "period=d:20261130", want: scoreQuery{Period: board.PeriodDay, PeriodID: "20261130", Limit: 20}},
		{raw: "period=season:s1-b_2", want: scoreQuery{Period: board.PeriodSeason, PeriodID: "s1-b_2", Limit: 20}},
		{raw: "period=w:2026W49", want: scoreQuery{Period: board.PeriodWeek, PeriodID: "2026W49", Limit: 20}},
		{raw: "period=total&scope=global", want: scoreQuery{Period: board.PeriodTotal, Limit: 20}},
		{raw: "period=&scope=&offset=&limit=", want: scoreQuery{Limit: 20}},
		{raw: "offset=1000&limit=101", want: scoreQuery{Offset: 1000, Limit: 100}},
		{raw: "limit=" + strings.Repeat("9", 500), want: scoreQuery{Limit: 100}},
		{raw: "day=20261130&tz=UTC&region=eu", want: scoreQuery{Steps: []string{"day", "tz", "region"}, Limit: 20}},
		{raw: "unknown=1", want: scoreQuery{Limit: 20}},

		{raw: "offset=1001", bad: `offset: "1001" is beyond 1000; a member beyond rank 1000 reads its own rank`},
		{raw: "offset=" + strings.Repeat("9", 5000), bad: "is beyond 1000"},
		{raw: "offset=-1", bad: "offset"},
		{raw: "limit=1.5", bad: "limit"},
		{raw: "limit=1&limit=1", bad: "limit: given more than once"},
		{raw: "period=d&period=w", bad: "period: given more than once"},
		{raw: "period=year", bad: `period: "year" is none of h, d, w, m, season, total`},
		{raw: "period=D", bad: "is none of"},
		{raw: "period=d:", bad: `period: the id in "d:" is not`},
		{raw: "period=d:2026%2011", bad: "is not [A-Za-z0-9_-]{1,64}"},
		{raw: "period=d:2026:11", bad: "is not [A-Za-z0-9_-]{1,64}"},
		{raw: "period=season:" + strings.Repeat("s", 65), bad: "is not [A-Za-z0-9_-]{1,64}"},
		{raw: "scope=a:b", bad: "scope: contains U+003A"},
		{raw: "scope=a%20b", bad: "scope: contains U+0020"},
		{raw: "scope=" + strings.Repeat("s", 65), bad: "scope: 65 bytes"},
		{raw: "scope=a%FF", bad: "scope: not valid UTF-8"},
		{raw: "a;b", bad: "semicolon"},
		{raw: many(10_001), bad: "exceeded limit"},
	} {
		got, err := parseScoreBoardQuery(tt.raw)
		what := "parseScoreBoardQuery(" + cut(tt.raw, 80) + ")"
		if tt.bad != "" {
			wantBad(t, what, err, tt.bad)
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s = %+v, %v; want %+v", what, got, err, tt.want)
		}
	}
}

func TestParseScoreMemberQuery(t *testing.T) {
	if q, err := parseScoreMemberQuery("m1", "period=h&neighbors=51"); err != nil || q.Member != "m1" || q.Neighbors != 50 || q.Period != board.PeriodHour {
		t.Errorf("= %+v, %v", q, err)
	}
	for _, tc := range []struct{ member, raw, bad string }{
		{"m:1", "", "member: contains U+003A"},
		{"", "", "member: missing"},
		{strings.Repeat("m", 129), "", "member: 129 bytes"},
		{"m1", "neighbors=-1", "neighbors"},
		{"m1", "neighbors=1&neighbors=2", "given more than once"},
		{"m1", "period=x", "is none of"},
		{"m1", "offset=5000", ""}, // not a parameter of this endpoint: ignored
	} {
		_, err := parseScoreMemberQuery(tc.member, tc.raw)
		if tc.bad == "" {
			if err != nil {
				t.Errorf("%q %q: %v", tc.member, tc.raw, err)
			}
			continue
		}
		wantBad(t, tc.member+" "+tc.raw, err, tc.bad)
	}
}

func testServerBoards(t testing.TB) *Server {
	t.Helper()
	bs, err := board.NewBoards([]board.Spec{
		{Name: "arena", Periods: []string{"h", "d", "w", "m", "total"}, TZ: "Asia/Shanghai", Shards: "16"},
		{Name: "cup", Periods: []string{"season", "d"}, TZ: "America/New_York",
			Seasons: []board.SeasonSpec{{Name: "s1", Start: "2026-11-01", End: "2026-12-01"}, {Name: "s2", Start: "2027-01-01", End: "2027-02-01"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{boards: map[string]*board.Board{}}
	WithBoards(bs)(s)
	return s
}

func TestResolve(t *testing.T) {
	s := testServerBoards(t)
	now := paramsNow // 2026-11-30T12:00Z: 20:00 in Shanghai, 07:00 in New York
	at := func(v string) *time.Time {
		ts, err := time.Parse(time.RFC3339, v)
		if err != nil {
			t.Fatal(err)
		}
		return &ts
	}
	for _, tt := range []struct {
		board, raw string
		period     string
		scope      string
		end        *time.Time
		status     int
		reason     string
	}{
		{board: "arena", raw: "", period: "total", scope: "global"},
		{board: "arena", raw: "period=d&scope=eu", period: "d:20261130", scope: "eu", end: at("2026-11-30T16:00:00Z")},
		{board: "arena", raw: "period=h", period: "h:2026113020", scope: "global", end: at("2026-11-30T13:00:00Z")},
		{board: "arena", raw: "period=w", period: "w:2026W49", scope: "global", end: at("2026-12-06T16:00:00Z")},
		{board: "arena", raw: "period=m:202602", period: "m:202602", scope: "global", end: at("2026-02-28T16:00:00Z")},
		{board: "arena", raw: "period=d:20261131", status: 400, reason: `period: "d:20261131" is not a period of board arena`},
		{board: "arena", raw: "period=season", status: 400, reason: "period: board arena keeps h, d, w, m, total, not season"},
		{board: "arena", raw: "day=20261130", status: 400, reason: "day: parameters of the steps board only"},
		{board: "cup", raw: "period=season", period: "season:s1", scope: "global", end: at("2026-12-01T05:00:00Z")},
		{board: "cup", raw: "", period: "d:20261130", scope: "global", end: at("2026-12-01T05:00:00Z")}, // the first period it keeps
		{board: "cup", raw: "period=season:s2", period: "season:s2", scope: "global", end: at("2027-02-01T05:00:00Z")},
		{board: "cup", raw: "period=season:s3", status: 400, reason: "is not a period of board cup"},
		{board: "cup", raw: "period=d", period: "d:20261130", scope: "global", end: at("2026-12-01T05:00:00Z")},
		{board: "nope", raw: "", status: 404, reason: `board "nope" is not declared`},
		{board: "steps", raw: "period=d", period: "d:20261130", scope: "global", end: at("2026-12-01T12:00:00Z")},
		{board: "steps", raw: "scope=eu-west", period: "d:20261130", scope: "eu-west", end: at("2026-12-01T12:00:00Z")},
		{board: "steps", raw: "period=d:20261129", period: "d:20261129", scope: "global", end: at("2026-11-30T12:00:00Z")},
		{board: "steps", raw: "period=d:19991231", status: 400, reason: "period: 19991231 is outside"},
		{board: "steps", raw: "period=total", status: 400, reason: "board steps keeps d, not total"},
		{board: "steps", raw: "period=d&day=20261130", status: 400, reason: "day: not with period and scope"},
	} {
		q, err := parseScoreBoardQuery(tt.raw)
		if err != nil {
			t.Fatalf("%s %s: %v", tt.board, tt.raw, err)
		}
		got, err := s.resolve(tt.board, q, now)
		if tt.status != 0 {
			var ae *apiError
			if !errors.As(err, &ae) || ae.code != tt.status || !strings.Contains(ae.msg, tt.reason) {
				t.Errorf("%s %s: %v, want %d saying %q", tt.board, tt.raw, err, tt.status, tt.reason)
			}
			continue
		}
		if err != nil || got.period != tt.period || got.scope != tt.scope || (got.end == nil) != (tt.end == nil) || got.end != nil && !got.end.Equal(*tt.end) {
			t.Errorf("%s %s: %+v %v, want period %s scope %s end %v", tt.board, tt.raw, got, err, tt.period, tt.scope, tt.end)
		}
	}
	// Between seasons there is no current one.
	q, _ := parseScoreBoardQuery("period=season")
	if _, err := s.resolve("cup", q, time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC)); err == nil || err.(*apiError).code != http.StatusNotFound {
		t.Errorf("current season between seasons: %v", err)
	}
}

// checkScoreQuery holds what every parse and resolution must guarantee: a short valid UTF-8
// reason on error, and otherwise counts within their caps, a valid scope and a resolved
// period the board keeps.
func checkScoreQuery(t *testing.T, s *Server, name string, q scoreQuery, err error) {
	t.Helper()
	if err == nil {
		var tg target
		if tg, err = s.resolve(name, q, paramsNow); err == nil {
			if q.Offset < 0 || q.Offset > MaxOffset || q.Limit < 0 || q.Limit > MaxLimit || q.Neighbors < 0 || q.Neighbors > MaxNeighbors ||
				q.Scope != "" && (topics.CheckScope(q.Scope) != nil || q.Scope == topics.GlobalScope) {
				t.Fatalf("accepted %+v", q)
			}
			if name != board.StepsBoard && (tg.ref.Shards < 1 || !s.boards[name].Has(tg.ref.Period)) {
				t.Fatalf("resolved %+v", tg)
			}
			return
		}
	}
	var ae *apiError
	if !errors.As(err, &ae) || ae.code != http.StatusBadRequest && ae.code != http.StatusNotFound || len(ae.msg) > 400 || !utf8.ValidString(ae.msg) {
		t.Fatalf("error %v: want a 400 or 404 with a short valid UTF-8 reason", err)
	}
}

func FuzzParseScoreBoardQuery(f *testing.F) {
	for _, s := range []string{"", "period=d:20261130&scope=eu&offset=5&limit=7", "period=season:s1", "period=w:2026W53", "offset=1001", "period=h:2026113024", "a;b", "%zz"} {
		f.Add("arena", s)
		f.Add("steps", s)
	}
	f.Add("cup", "period=season")
	s := testServerBoards(f)
	f.Fuzz(func(t *testing.T, name, raw string) {
		q, err := parseScoreBoardQuery(raw)
		checkScoreQuery(t, s, name, q, err)
	})
}

func FuzzParseScoreMemberQuery(f *testing.F) {
	f.Add("arena", "m1", "period=d&neighbors=3")
	f.Add("steps", "u1", "period=d:20261130&scope=eu")
	f.Add("cup", "a:b", "")
	s := testServerBoards(f)
	f.Fuzz(func(t *testing.T, name, member, raw string) {
		q, err := parseScoreMemberQuery(member, raw)
		if err == nil && (q.Member != member || topics.CheckID("member", member) != nil) {
			t.Fatalf("member %q accepted as %q", member, q.Member)
		}
		checkScoreQuery(t, s, name, q, err)
	})
}
