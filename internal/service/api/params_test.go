package api

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/topics"
)

var paramsNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// many is n parameters named a.
func many(n int) string { return strings.Repeat("a=1&", n-1) + "a=1" }

// wantBad checks err is a 400 whose reason contains want and is short.
func wantBad(t *testing.T, what string, err error, want string) {
	t.Helper()
	var ae *apiError
	if !errors.As(err, &ae) || ae.code != http.StatusBadRequest {
		t.Errorf("%s: error %v, want a 400", what, err)
		return
	}
	if !strings.Contains(ae.msg, want) || len(ae.msg) > 300 || !utf8.ValidString(ae.msg) {
		t.Errorf("%s: reason %q (%d bytes), want a short one containing %q", what, ae.msg, len(ae.msg), want)
	}
}

func TestParseBoardQuery(t *testing.T) {
	today := board.Day(20261130)
	for _, tt := range []struct {
		raw  string
		want boardQuery
		bad  string // the reason must contain it; "" means valid
	}{
		{raw: "", want: boardQuery{Day: today, Limit: 20}},
		{raw: "day=20261129&region=eu-west&offset=5&limit=7", want: boardQuery{Day: 20261129, Region: "eu-west", Offset: 5, Limit: 7}},
		{raw: "tz=Pacific/Kiritimati", want: boardQuery{Day: 20261201, Limit: 20}},
		{raw: "tz=Pacific/Pago_Pago", want: boardQuery{Day: 20261130, Limit: 20}},
		{raw: "day=20261130&tz=Asia/Tokyo", want: boardQuery{Day: today, Limit: 20}},
		{raw: "day=&region=&limit=&offset=&tz=", want: boardQuery{Day: today, Limit: 20}}, // empty = absent
		{raw: "limit=0", want: boardQuery{Day: today}},
		{raw: "limit=101&offset=1001", want: boardQuery{Day: today, Offset: MaxOffset, Limit: MaxLimit}}, // clamped
		{raw: "limit=99999999999999999999999&offset=" + strings.Repeat("9", 5000), want: boardQuery{Day: today, Offset: MaxOffset, Limit: MaxLimit}},
		{raw: "limit=007", want: boardQuery{Day: today, Limit: 7}},
		{raw: "unknown=1&x=%41", want: boardQuery{Day: today, Limit: 20}}, // unknown parameters ignored
		{raw: "day=20000101", want: boardQuery{Day: 20000101, Limit: 20}},
		{raw: "day=20261202", want: boardQuery{Day: 20261202, Limit: 20}},
		{raw: "region=%E5%8C%97%E4%BA%AC", want: boardQuery{Day: today, Region: "北京", Limit: 20}},

		{raw: many(10_001), bad: "number of URL query parameters exceeded limit"},
		{raw: many(10_000) + "&limit=-1", bad: "number of URL query parameters exceeded limit"},
		{raw: "limit=%zz", bad: "invalid URL escape"},
		{raw: "limit=1;offset=2", bad: "semicolon"},
		{raw: "limit=1&limit=2", bad: "limit: given more than once"},
		{raw: "day=20261130&day=20261129", bad: "day: given more than once"},
		{raw: "region=a&region=b", bad: "region: given more than once"},
		{raw: "limit=-1", bad: `limit: "-1" is not a non-negative integer`},
		{raw: "limit=%2B1", bad: "limit"},
		{raw: "offset=1.5", bad: "offset"},
		{raw: "offset=1e3", bad: "offset"},
		{raw: "offset=0x10", bad: "offset"},
		{raw: "offset=%201", bad: "offset"},
		{raw: "offset=ten", bad: "offset"},
		{raw: "offset=%D9%A1", bad: "offset"}, // Arabic-Indic one
		{raw: "limit=" + strings.Repeat("x", 100_000), bad: "(100000 bytes)"},
		{raw: "day=00000101", bad: "day: 00000101 is outside 20000101..20261202"},
		{raw: "day=19991231", bad: "outside"},
		{raw: "day=20261203", bad: "outside"},
		{raw: "day=99991231", bad: "outside"},
		{raw: "day=20261131", bad: `day: "20261131" is not a date`},
		{raw: "day=20260229", bad: "is not a date"},
		{raw: "day=2026-11-30", bad: "is not YYYYMMDD"},
		{raw: "day=2026113", bad: "is not YYYYMMDD"},
		{raw: "day=%2B2026113", bad: "is not YYYYMMDD"},
		{raw: "day=202611300", bad: "is not YYYYMMDD"},
		{raw: "tz=Nowhere/City", bad: `tz: unknown zone "Nowhere/City"`},
		{raw: "day=20261130&tz=Nowhere/City", bad: "tz: unknown zone"},
		{raw: "tz=Local", bad: "tz: unknown zone"},
		{raw: "tz=../../etc/passwd", bad: "tz: unknown zone"},
		{raw: "tz=" + strings.Repeat("A", 1<<20), bad: "(1048576 bytes)"},
		{raw: "region=a%20b", bad: "region: contains U+0020"},
		{raw: "region=a:b", bad: "region: contains U+003A"},
		{raw: "region=a%0D%0Ab", bad: `region: contains U+000D`},
		{raw: "region=a%00", bad: `region: contains U+0000`},
		{raw: "region=a%FF", bad: "region: not valid UTF-8"},
		{raw: "region=" + strings.Repeat("r", 65), bad: "region: 65 bytes, longer than 64"},
		{raw: "region=" + strings.Repeat("r", 64<<10), bad: "region: 65536 bytes, longer than 64"},
	} {
		got, err := parseBoardQuery(tt.raw, paramsNow)
		what := "parseBoardQuery(" + cut(tt.raw, 80) + ")"
		if tt.bad != "" {
			wantBad(t, what, err, tt.bad)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s = %+v, %v; want %+v", what, got, err, tt.want)
		}
	}
}

func TestParseMemberQuery(t *testing.T) {
	for _, tt := range []struct {
		member, raw string
		want        memberQuery
		bad         string
	}{
		{member: "u1", want: memberQuery{Day: 20261130, Member: "u1"}},
		{member: "用户/1", raw: "day=20261129&region=eu&neighbors=3", want: memberQuery{Day: 20261129, Region: "eu", Member: "用户/1", Neighbors: 3}},
		{member: "u1", raw: "neighbors=51", want: memberQuery{Day: 20261130, Member: "u1", Neighbors: MaxNeighbors}},
		{member: strings.Repeat("m", topics.MaxIDBytes), want: memberQuery{Day: 20261130, Member: strings.Repeat("m", topics.MaxIDBytes)}},

		{member: "", bad: "member: missing"},
		{member: strings.Repeat("m", topics.MaxIDBytes+1), bad: "member: 129 bytes, longer than 128"},
		{member: strings.Repeat("m", 1<<20), bad: "member: 1048576 bytes, longer than 128"},
		{member: "a b", bad: "member: contains U+0020"},
		{member: "a:b", bad: "member: contains U+003A"},
		{member: "a\x00", bad: `member: contains U+0000`},
		{member: "a\r\nb", bad: `member: contains U+000D`},
		{member: "a\xffb", bad: "member: not valid UTF-8"},
		{member: "u1", raw: "neighbors=-1", bad: "neighbors"},
		{member: "u1", raw: "neighbors=1&neighbors=2", bad: "neighbors: given more than once"},
		{member: "u1", raw: "day=00000101", bad: "day"},
		{member: "u1", raw: "region=a%0Ab", bad: "region"},
		{member: "u1", raw: "tz=Mars/Olympus", bad: "tz"},
		{member: "u1", raw: many(10_001), bad: "query string"},
	} {
		got, err := parseMemberQuery(tt.member, tt.raw, paramsNow)
		what := "parseMemberQuery(" + cut(tt.member, 40) + ", " + cut(tt.raw, 40) + ")"
		if tt.bad != "" {
			wantBad(t, what, err, tt.bad)
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s = %+v, %v; want %+v", what, got, err, tt.want)
		}
	}
}

func TestParseHotQuery(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want int
		bad  string
	}{
		{raw: "", want: 10}, {raw: "k=0", want: 0}, {raw: "k=3", want: 3}, {raw: "k=100", want: 100},
		{raw: "k=101", want: 100}, {raw: "k=18446744073709551616", want: 100}, {raw: "k=&tz=Nowhere", want: 10},
		{raw: "k=-1", bad: "k:"}, {raw: "k=ten", bad: "k:"}, {raw: "k=1&k=1", bad: "k: given more than once"},
		{raw: "k=%", bad: "invalid URL escape"}, {raw: many(10_001) + "&k=5", bad: "exceeded limit"},
	} {
		got, err := parseHotQuery(tt.raw)
		if tt.bad != "" {
			wantBad(t, "parseHotQuery("+cut(tt.raw, 40)+")", err, tt.bad)
			continue
		}
		if err != nil || got.K != tt.want {
			t.Errorf("parseHotQuery(%s) = %+v, %v; want k %d", tt.raw, got, err, tt.want)
		}
	}
}

func TestEcho(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"abc", `"abc"`},
		{strings.Repeat("a", 64), `"` + strings.Repeat("a", 64) + `"`},
		{strings.Repeat("a", 65), `"` + strings.Repeat("a", 64) + `"... (65 bytes)`},
		{strings.Repeat("a", 63) + "é", `"` + strings.Repeat("a", 63) + `"... (65 bytes)`}, // not split inside é
		{"\xff\x00", `"\xff\x00"`},
	} {
		if got := echo(tt.in); got != tt.want {
			t.Errorf("echo(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// checkParsed holds what every parse must guarantee, whatever the input: a short, valid
// UTF-8 reason on error; values within their caps and valid for Redis keys otherwise.
func checkParsed(t *testing.T, day board.Day, region string, err error, counts ...[2]int) {
	t.Helper()
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) || ae.code != http.StatusBadRequest || len(ae.msg) > 300 || !utf8.ValidString(ae.msg) {
			t.Fatalf("error %v: want a 400 with a short valid UTF-8 reason", err)
		}
		return
	}
	if day < firstDay || day > board.DayOf(paramsNow, time.UTC).AddDays(daysAhead) || day.String() != day.Date().Format("20060102") {
		t.Fatalf("day %v out of range or not a date", day)
	}
	if region != "" && topics.CheckRegion(region) != nil {
		t.Fatalf("invalid region %q accepted", region)
	}
	for _, c := range counts {
		if c[0] < 0 || c[0] > c[1] {
			t.Fatalf("count %d outside 0..%d", c[0], c[1])
		}
	}
}

func FuzzParseBoardQuery(f *testing.F) {
	for _, s := range []string{"", "day=20261130&region=eu&offset=5&limit=7", "limit=1&limit=2", "day=00000101", "tz=Asia/Tokyo", "region=a%00", "offset=99999999999999999999", "a;b", "%zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := parseBoardQuery(raw, paramsNow)
		checkParsed(t, q.Day, q.Region, err, [2]int{q.Offset, MaxOffset}, [2]int{q.Limit, MaxLimit})
	})
}

func FuzzParseMemberQuery(f *testing.F) {
	f.Add("u1", "neighbors=3")
	f.Add("a:b", "")
	f.Add("u1", "day=20261131&tz=Nowhere")
	f.Fuzz(func(t *testing.T, member, raw string) {
		q, err := parseMemberQuery(member, raw, paramsNow)
		checkParsed(t, q.Day, q.Region, err, [2]int{q.Neighbors, MaxNeighbors})
		if err == nil && (q.Member != member || topics.CheckID("member", member) != nil) {
			t.Fatalf("member %q accepted as %q", member, q.Member)
		}
	})
}

func FuzzParseHotQuery(f *testing.F) {
	for _, s := range []string{"", "k=5", "k=-1", "k=1&k=2", "k=" + strings.Repeat("9", 30)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := parseHotQuery(raw)
		checkParsed(t, firstDay, "", err, [2]int{q.K, MaxHotK})
	})
}

// checkParamsAsNetURL checks that parseParams reads raw as url.ParseQuery does: the same
// values of the known parameters, or the same error.
func checkParamsAsNetURL(t *testing.T, raw string, known ...string) {
	t.Helper()
	got, err := parseParams(raw, known...)
	want, wantErr := parseParamsNetURL(raw, known)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) || got.vals != want.vals {
		t.Fatalf("parseParams(%q) = %q, %v; url.ParseQuery gives %q, %v", cut(raw, 200), got.vals, err, want.vals, wantErr)
	}
}

// TestParseParamsAsNetURL: random query strings of the parameters' names, values, separators
// and escapes, split in place or through url.ParseQuery, read the same.
func TestParseParamsAsNetURL(t *testing.T) {
	tokens := []string{"day", "tz", "region", "offset", "limit", "period", "scope", "x", "", "=", "=", "&", "&", "&&",
		"20261130", "eu", "5", "a=b", "%41", "%zz", "+", ";", "%", "==", "&=", "lim", "it"}
	known := []string{"day", "tz", "region", "offset", "limit", "period", "scope"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50_000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(tokens[rng.IntN(len(tokens))])
		}
		checkParamsAsNetURL(t, b.String(), known[:1+rng.IntN(len(known))]...)
	}
	for _, raw := range []string{many(maxPlainParams), many(maxPlainParams + 1), many(10_000) + "&limit=1", many(10_001)} {
		checkParamsAsNetURL(t, raw, "limit", "a")
	}
}

func FuzzParseParamsAsNetURL(f *testing.F) {
	for _, s := range []string{"", "day=20261130&region=eu&offset=5&limit=7", "limit=1&limit=", "limit&offset=1", "=1&&limit=2", "a;b", "%zz", "limit=a+b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkParamsAsNetURL(t, raw, "day", "tz", "region", "offset", "limit")
	})
}
