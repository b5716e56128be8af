package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rankstream/rankstream/internal/service/api"
)

// maxErrorBody bounds the body of any refusal: a reason, never the request echoed back.
const maxErrorBody = 1 << 10

// TestHostileRequests sends every endpoint requests a hostile or careless client sends, on
// the real redis-server and with the binary's server limits, and checks each gets a 4xx with
// a short reason; and that what must work still works.
func TestHostileRequests(t *testing.T) {
	srv, rdb := newServer(t)
	seed(t, rdb, 30)

	params := strings.Repeat("a=1&", 10_000) + "a=1" // 10,001 parameters
	mb := strings.Repeat("m", 1<<20)
	for _, tt := range []struct {
		name, method, path string
		code               int
		reason             string // in the JSON "error", when the answer is ours
	}{
		// More than 10,000 parameters: Go's parser fails; the request is refused, not read
		// as if it had none (it was 200 with the defaults).
		{"board, 10,001 parameters", "GET", "/v1/boards/steps?" + params + "&limit=1", 400, "number of URL query parameters exceeded limit"},
		{"member, 10,001 parameters", "GET", "/v1/boards/steps/members/m001?" + params, 400, "exceeded limit"},
		{"hot, 10,001 parameters", "GET", "/v1/hot/search?" + params, 400, "exceeded limit"},
		{"bad escape", "GET", "/v1/boards/steps?day=20261130&region=%zz", 400, "invalid URL escape"},
		{"semicolon", "GET", "/v1/boards/steps?day=20261130;limit=1", 400, "semicolon"},

		// Regions with what a Redis key must not hold (all were 200).
		{"region with a space", "GET", "/v1/boards/steps?day=20261130&region=a%20b", 400, "region: contains U+0020"},
		{"region with ':'", "GET", "/v1/boards/steps?day=20261130&region=eu:west", 400, "region: contains U+003A"},
		{"region with CR LF", "GET", "/v1/boards/steps?region=a%0D%0ASet-Cookie:x", 400, `region: contains U+000D`},
		{"region with NUL", "GET", "/v1/boards/steps/members/m001?region=%00", 400, `region: contains U+0000`},
		{"region, invalid UTF-8", "GET", "/v1/boards/steps?region=%C0%AF", 400, "region: not valid UTF-8"},
		{"region of 64 KB", "GET", "/v1/boards/steps?region=" + strings.Repeat("r", 64<<10), 400, "region: 65536 bytes, longer than 64"},

		// Days.
		{"day 00000101", "GET", "/v1/boards/steps?day=00000101", 400, "day: 00000101 is outside"},
		{"day 99991231", "GET", "/v1/boards/steps?day=99991231", 400, "outside"},
		{"day 20261131", "GET", "/v1/boards/steps?day=20261131", 400, "is not a date"},
		{"day with dashes", "GET", "/v1/boards/steps/members/m001?day=2026-11-30", 400, "is not YYYYMMDD"},
		{"day twice", "GET", "/v1/boards/steps?day=20261130&day=20261129", 400, "day: given more than once"},
		{"unknown tz with day", "GET", "/v1/boards/steps?day=20261130&tz=Nowhere/City", 400, "tz: unknown zone"},
		{"unknown tz, member", "GET", "/v1/boards/steps/members/m001?tz=Local", 400, "tz: unknown zone"},

		// Counts in every wrong shape; above a cap they are clamped (TestStepsBoardPages).
		{"negative limit", "GET", "/v1/boards/steps?limit=-1", 400, "limit:"},
		{"signed offset", "GET", "/v1/boards/steps?offset=%2B5", 400, "offset:"},
		{"float offset", "GET", "/v1/boards/steps?offset=1.5", 400, "offset:"},
		{"limit twice", "GET", "/v1/boards/steps?limit=1&limit=100", 400, "limit: given more than once"},
		{"neighbors, words", "GET", "/v1/boards/steps/members/m001?day=20261130&neighbors=all", 400, "neighbors:"},
		{"neighbors twice", "GET", "/v1/boards/steps/members/m001?neighbors=1&neighbors=2", 400, "neighbors: given more than once"},
		{"k hex", "GET", "/v1/hot/search?k=0x10", 400, "k:"},
		{"k negative", "GET", "/v1/hot/search?k=-5", 400, "k:"},
		{"k of 60 KB", "GET", "/v1/hot/search?k=" + strings.Repeat("x", 60<<10), 400, "(61440 bytes)"},

		// Member ids follow the rules of user ids; what is quoted back is cut.
		{"member with NUL", "GET", "/v1/boards/steps/members/a%00b", 400, `member: contains U+0000`},
		{"member with CR LF", "GET", "/v1/boards/steps/members/a%0D%0Ab", 400, `member: contains U+000D`},
		{"member with ':'", "GET", "/v1/boards/steps/members/a:b", 400, "member: contains U+003A"},
		{"member with a space", "GET", "/v1/boards/steps/members/a%20b", 400, "member: contains U+0020"},
		{"member, invalid UTF-8", "GET", "/v1/boards/steps/members/a%FF", 400, "member: not valid UTF-8"},
		{"member of 129 bytes", "GET", "/v1/boards/steps/members/" + strings.Repeat("m", 129), 400, "member: 129 bytes, longer than 128"},
		{"member of 60 KB", "GET", "/v1/boards/steps/members/" + strings.Repeat("m", 60<<10), 400, "member: 61440 bytes, longer than 128"},
		{"member of 128 bytes not on the board", "GET", "/v1/boards/steps/members/" + strings.Repeat("n", 128) + "?day=20261130", 404, `member "` + strings.Repeat("n", 64) + `"... (128 bytes) is not on board`},

		// Requests larger than the server takes: 431 from net/http, before any handler.
		{"member of 1 MB", "GET", "/v1/boards/steps/members/" + mb, 431, ""},
		{"metrics with a 1 MB query", "GET", "/metrics?" + mb, 431, ""},
		{"healthz with a 1 MB query", "GET", "/healthz?x=" + mb, 431, ""},

		// The generic board endpoints (no boards declared here: only steps answers).
		{"generic, undeclared board", "GET", "/v1/boards/arena?period=total", 404, `board "arena" is not declared`},
		{"generic, board name with NUL", "GET", "/v1/boards/a%00b", 404, `board "a\x00b" is not declared`},
		{"generic, board name of 60 KB", "GET", "/v1/boards/" + strings.Repeat("b", 60<<10), 404, "(61440 bytes) is not declared"},
		{"generic, member of an undeclared board", "GET", "/v1/boards/arena/members/m001", 404, "is not declared"},
		{"generic, deep page", "GET", "/v1/boards/steps?period=d:20261130&offset=1001", 400, "is beyond 1000"},
		{"generic, offset of 60 KB", "GET", "/v1/boards/steps?period=d&offset=" + strings.Repeat("9", 60<<10), 400, "is beyond 1000"},
		{"generic, unknown period", "GET", "/v1/boards/steps?period=year", 400, "is none of h, d, w, m, season, total"},
		{"generic, steps by the week", "GET", "/v1/boards/steps?period=w", 400, "board steps keeps d, not w"},
		{"generic, period id with a space", "GET", "/v1/boards/steps?period=d:2026%2011", 400, "is not [A-Za-z0-9_-]{1,64}"},
		{"generic, scope with ':'", "GET", "/v1/boards/steps/members/m001?scope=eu:west", 400, "scope: contains U+003A"},
		{"generic, day beside period", "GET", "/v1/boards/steps?period=d:20261130&day=20261130", 400, "day: not with period and scope"},
		{"POST a generic board", "POST", "/v1/boards/arena", 405, ""},

		// Methods and paths that do not exist.
		{"POST a board", "POST", "/v1/boards/steps", 405, ""},
		{"DELETE hot", "DELETE", "/v1/hot/search", 405, ""},
		{"POST healthz", "POST", "/healthz", 405, ""},
		{"PUT readyz", "PUT", "/readyz", 405, ""},
		{"POST metrics", "POST", "/metrics", 405, ""},
		{"no member", "GET", "/v1/boards/steps/members/", 404, ""},

		// What must keep working: unknown parameters are ignored, caps clamp.
		{"unknown parameter", "GET", "/v1/boards/steps?day=20261130&utm_source=x&_=1", 200, ""},
		{"generic, neighbors above the cap", "GET", "/v1/boards/steps/members/m001?period=d:20261130&neighbors=99", 200, ""},
		{"limit above the cap", "GET", "/v1/boards/steps?day=20261130&limit=" + strings.Repeat("9", 40), 200, ""},
		{"healthz with parameters", "GET", "/healthz?" + params, 200, ""},
		{"readyz with parameters", "GET", "/readyz?" + params, 200, ""},
		{"metrics with parameters", "GET", "/metrics?" + params, 200, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, srv.URL+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			if resp.StatusCode != tt.code {
				t.Fatalf("%s %s = %d %.200s, want %d", tt.method, cutPath(tt.path), resp.StatusCode, body, tt.code)
			}
			if tt.code >= 400 && len(body) > maxErrorBody {
				t.Fatalf("%d answer of %d bytes: %.200s", tt.code, len(body), body)
			}
			if tt.reason == "" {
				return
			}
			var e struct{ Error string }
			if err := json.Unmarshal(body, &e); err != nil || !strings.Contains(e.Error, tt.reason) {
				t.Fatalf("reason %q (%v), want it to contain %q", e.Error, err, tt.reason)
			}
		})
	}
	var p api.Page
	get(t, srv, "/v1/boards/steps?day=20261130&limit="+strings.Repeat("9", 40), 200, &p)
	if len(p.Items) != 30 || p.Total != 30 {
		t.Fatalf("clamped limit: %d items of %d", len(p.Items), p.Total)
	}
}

func cutPath(p string) string {
	if len(p) > 100 {
		return p[:100] + "..."
	}
	return p
}
