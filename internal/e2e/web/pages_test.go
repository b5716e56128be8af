package webe2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/rankstream/rankstream/internal/platform/kafka"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// EnvScreenshots names the folder the tests save their screenshots in (make screenshots);
// without it they are taken and dropped.
const EnvScreenshots = "RANKSTREAM_SCREENSHOTS"

// deadline bounds every wait for the pages or the pipeline (a loaded machine is slow).
const deadline = 90 * time.Second

// site is a rankstream HTTP server under test and a browser tab on it.
type site struct {
	t    *testing.T
	base string
	tab  context.Context
}

func (s *site) run(a chromedp.Action[chromedp.Void]) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.tab, deadline)
	defer cancel()
	if err := chromedp.Do(ctx, a); err != nil {
		s.t.Fatal(err)
	}
}

func (s *site) open(path string) { s.t.Helper(); s.run(chromedp.Navigate(s.base + path)) }

// eval evaluates a JavaScript expression in the page into v.
func eval[T any](s *site, expr string) T {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.tab, deadline)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		s.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitJS waits until the expression is true in the page.
func (s *site) waitJS(what, expr string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.tab, deadline)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(deadline), chromedp.WithPollingInterval(100*time.Millisecond))); err != nil {
		s.t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// text is the text of the element with the id, "" when it is hidden.
func (s *site) text(id string) string {
	s.t.Helper()
	return eval[string](s, fmt.Sprintf(`(e => e && !e.hidden ? e.textContent : "")(document.getElementById(%q))`, id))
}

// get reads a JSON resource of the server into v and returns its status, 0 when the server
// did not answer.
func (s *site) get(path string, v any) int {
	s.t.Helper()
	res, err := http.Get(s.base + path)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusOK && v != nil {
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			s.t.Fatalf("%s: %v", path, err)
		}
	}
	return res.StatusCode
}

// eventually retries check until it returns nil, failing with its last error after deadline.
func eventually(t *testing.T, what string, check func() error) {
	t.Helper()
	var err error
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		if err = check(); err == nil {
			return
		}
	}
	t.Fatalf("%s: %v", what, err)
}

// screenshot takes a full-page PNG and saves it as name in $RANKSTREAM_SCREENSHOTS, if set.
func (s *site) screenshot(name string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.tab, deadline)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		s.t.Fatal(err)
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		s.t.Fatalf("screenshot %s: not a PNG", name)
	}
	if dir := os.Getenv(EnvScreenshots); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			s.t.Fatal(err)
		}
	}
}

// row is a board entry as the page shows it (podium cards and table rows).
type row struct {
	Rank   int64  `json:"rank"`
	Member string `json:"member"`
	Score  int64  `json:"score"`
}

const boardRowsJS = `[...document.querySelectorAll("#podium li, #board-table tbody tr")].map(e => ({rank: +e.dataset.rank, member: e.dataset.member, score: +e.dataset.score}))`

// boardMatchesAPI reloads the board on the page and compares it with the API's page at query
// until they agree (the demo traffic moves the board between the two reads).
func (s *site) boardMatchesAPI(query string) []row {
	s.t.Helper()
	var shown []row
	eventually(s.t, "the board page shows the API's "+query, func() error {
		eval[chromedp.Void](s, `load(true)`)
		shown = eval[[]row](s, boardRowsJS)
		var p api.BoardPage
		if code := s.get("/v1/boards/"+query, &p); code != http.StatusOK {
			return fmt.Errorf("API answered %d", code)
		}
		var want []row
		for _, e := range p.Items {
			want = append(want, row{e.Rank, e.Member, e.Score})
		}
		if len(want) == 0 || !slices.Equal(shown, want) {
			return fmt.Errorf("page shows %v, API answers %v", shown, want)
		}
		return nil
	})
	return shown
}

// TestPages runs rankstream dev with demo traffic and checks, in Chromium, the hot-search
// page (the list the API answers, refreshing by itself), the leaderboard page (the board the
// API answers, the period, scope and board switchers, jump to me, the limit at rank 1000,
// the friends view, a phone width), then serve --history on ClickHouse for the time travel,
// the empty states, and Redis down.
func TestPages(t *testing.T) {
	tab := testenv.Browser(t, 1000, 1200)
	bin := testenv.Rankstream(t)
	redisAddr, db := testenv.RedisAddr(t)

	devAddr := testenv.FreeAddr(t)
	const apiKey = "pages-test-key"
	dev := testenv.StartProcess(t, "dev", bin, "dev", "--http", devAddr, "--api-key", apiKey, "--redis", fmt.Sprintf("redis://%s/%d", redisAddr, db), "--data-dir", "")
	s := &site{t: t, base: "http://" + devAddr, tab: tab}
	var hot topics.TopKSnapshot
	eventually(t, "dev answers its first hot-search snapshot", func() error {
		if err := dev.Exited(); err != nil {
			t.Fatalf("dev: %v", err)
		}
		if code := s.get("/v1/hot/search", &hot); code != http.StatusOK {
			return fmt.Errorf("GET /v1/hot/search: %d", code)
		}
		return nil
	})
	// Its logs share the output: the pages' line comes first after the banner.
	if !strings.Contains(dev.Output(), "rankstream dev is running\n  pages:          http://"+devAddr+"/ ") {
		t.Errorf("dev does not print the page URL first:\n%s", dev.Output())
	}

	planted := plantHourBoards(t, dev.Output())

	t.Run("hot search", func(t *testing.T) {
		s.t = t
		s.open("/")
		type item struct {
			Item  string `json:"item"`
			Count uint64 `json:"count"`
			Error uint64 `json:"error"`
		}
		type shown struct {
			End   string `json:"end"`
			Items []item `json:"items"`
		}
		const js = `({end: document.getElementById("live-table").dataset.windowEnd || "", items: [...document.querySelectorAll("#live-table tbody tr")].map(e => ({item: e.dataset.term, count: +e.dataset.count, error: +e.dataset.error}))})`
		s.waitJS("the live list", `document.querySelectorAll("#live-table tbody tr").length > 0`)
		var first string
		eventually(t, "the live list is the API's", func() error {
			page := eval[shown](s, js)
			var snap topics.TopKSnapshot
			if code := s.get("/v1/hot/search?k=10", &snap); code != http.StatusOK {
				return fmt.Errorf("API answered %d", code)
			}
			if page.End != topics.FormatSnapshotTime(snap.WindowEnd) {
				return fmt.Errorf("page shows the window ending %s, API %s", page.End, topics.FormatSnapshotTime(snap.WindowEnd))
			}
			var want []item
			for _, it := range snap.Items {
				want = append(want, item{it.Item, it.Count, it.Error})
			}
			if !slices.Equal(page.Items, want) {
				return fmt.Errorf("page shows %v, API answers %v", page.Items, want)
			}
			first = page.End
			return nil
		})
		// Without a reload or a click, the next slide's list replaces it, with trends against it.
		s.waitJS("the next window", fmt.Sprintf(`(document.getElementById("live-table").dataset.windowEnd || %q) !== %q`, first, first))
		if c := s.text("live-caption"); !strings.Contains(c, "trend against the window ending "+first[11:19]) {
			t.Errorf("caption %q: want trends against the window ending %s", c, first[11:19])
		}
		if w := s.text("live-window"); !strings.Contains(w, "(60 min)") {
			t.Errorf("window line %q: want the one-hour window", w)
		}
		s.screenshot("hot-search.png")
	})

	t.Run("leaderboards", func(t *testing.T) {
		s.t = t
		eventually(t, "the arena board fills", func() error {
			var p api.BoardPage
			if s.get("/v1/boards/arena?period=total&limit=20", &p); p.Total < 30 {
				return fmt.Errorf("%d members", p.Total)
			}
			return nil
		})
		s.open("/boards?board=arena&period=total")
		s.waitJS("the board", `document.querySelectorAll("#podium li").length === 3`)
		s.boardMatchesAPI("arena?period=total&limit=20")
		if c := s.text("countdown"); !strings.Contains(c, "never resets") {
			t.Errorf("countdown of the total board: %q", c)
		}

		// The period switcher: only arena's periods; the hour board with its countdown.
		if got := eval[[]string](s, `[...document.querySelectorAll("#periods input")].map(e => e.value)`); !slices.Equal(got, []string{"h", "d", "w", "total"}) {
			t.Errorf("arena's periods offered: %v", got)
		}
		eventually(t, "the planted members lead the hour board", func() error {
			var p api.BoardPage
			if s.get("/v1/boards/arena?period=h&limit=1", &p); len(p.Items) == 0 || !strings.HasPrefix(p.Items[0].Member, "pw") {
				return fmt.Errorf("hour board: %v", p.Items)
			}
			return nil
		})
		s.run(chromedp.Click(chromedp.CSS(`#periods input[value="h"] + span`)))
		s.waitJS("the hour board", `document.getElementById("board-caption").textContent.includes("hour h:")`)
		hour := time.Now().UTC().Format("2006010215")
		shown := s.boardMatchesAPI("arena?period=h:" + hour + "&limit=20")
		// Each member's move against the previous hour, as its rank there in the API says.
		s.waitJS("the trends", `[...document.querySelectorAll(".trend")].every(e => e.textContent !== "")`)
		trends := eval[map[string]string](s, `Object.fromEntries([...document.querySelectorAll("#podium li, #board-table tbody tr")].map(e => [e.dataset.member, e.querySelector(".trend").textContent]))`)
		prevHour := time.Now().UTC().Add(-time.Hour).Format("2006010215")
		for _, r := range shown {
			want := "new"
			var st api.BoardStanding
			switch code := s.get("/v1/boards/arena/members/"+url.PathEscape(r.Member)+"?period=h:"+prevHour+"&neighbors=0", &st); {
			case code == http.StatusOK && st.Member.Rank > r.Rank:
				want = fmt.Sprintf("▲ %d", st.Member.Rank-r.Rank)
			case code == http.StatusOK && st.Member.Rank < r.Rank:
				want = fmt.Sprintf("▼ %d", r.Rank-st.Member.Rank)
			case code == http.StatusOK:
				want = "="
			case code != http.StatusNotFound:
				t.Fatalf("previous hour of %s: %d", r.Member, code)
			}
			if trends[r.Member] != want {
				t.Errorf("rank %d %s: trend %q, want %q", r.Rank, r.Member, trends[r.Member], want)
			}
			if w, ok := planted[r.Member]; ok && w != want {
				t.Errorf("rank %d %s: the API answers %q for the previous hour, the planted ops %q", r.Rank, r.Member, want, w)
			}
		}
		if !strings.Contains(strings.Join(slices.Collect(maps.Values(trends)), " "), "▲ 1") {
			t.Errorf("no planted move in the trends %v", trends)
		}
		s.screenshot("leaderboard-hour.png")
		if c := s.text("countdown"); !strings.HasPrefix(c, "Resets in ") {
			t.Errorf("countdown of the hour board: %q", c)
		}

		// The scope switcher.
		s.run(chromedp.SetValue(chromedp.CSS("#scope"), "cn-east"))
		eval[chromedp.Void](s, `document.getElementById("scope").dispatchEvent(new Event("change"))`)
		s.waitJS("the cn-east board", `document.getElementById("board-caption").textContent.includes("cn-east")`)
		s.boardMatchesAPI("arena?period=h:" + hour + "&scope=cn-east&limit=20")

		// The board switcher: highscore keeps d, m and total.
		eval[chromedp.Void](s, `(b => { b.value = "highscore"; b.dispatchEvent(new Event("change")); })(document.getElementById("board"))`)
		s.waitJS("the highscore board", `document.getElementById("title").textContent.endsWith("highscore")`)
		if got := eval[[]string](s, `[...document.querySelectorAll("#periods input")].map(e => e.value)`); !slices.Equal(got, []string{"d", "m", "total"}) {
			t.Errorf("highscore's periods offered: %v", got)
		}

		// Jump to me: a member from the middle of arena's total board, with 3 neighbours each side.
		me := shown[10].Member
		s.open("/boards?board=arena&period=total")
		s.waitJS("the board", `document.querySelectorAll("#podium li").length === 3`)
		s.run(chromedp.SetValue(chromedp.CSS("#viewer"), me))
		eventually(t, "jump to me shows the API's standing", func() error {
			s.run(chromedp.Click(chromedp.CSS("#jump")))
			s.waitJS("my standing", `!document.getElementById("me-table").hidden || !document.getElementById("me-msg").hidden`)
			got := eval[[]row](s, `[...document.querySelectorAll("#me-table tbody tr")].map(e => ({rank: +e.dataset.rank, member: e.dataset.member, score: +e.dataset.score}))`)
			mine := eval[[]string](s, `[...document.querySelectorAll("#me-table tbody tr.me")].map(e => e.dataset.member)`)
			var st api.BoardStanding
			if code := s.get("/v1/boards/arena/members/"+url.PathEscape(me)+"?period=total&neighbors=3", &st); code != http.StatusOK {
				return fmt.Errorf("API answered %d", code)
			}
			var want []row
			for _, e := range slices.Concat(st.Above, []api.Entry{st.Member}, st.Below) {
				want = append(want, row{e.Rank, e.Member, e.Score})
			}
			if !slices.Equal(got, want) || !slices.Equal(mine, []string{me}) || len(st.Above) != 3 || len(st.Below) != 3 {
				return fmt.Errorf("page shows %v (me: %v), API answers %v", got, mine, want)
			}
			return nil
		})
		s.screenshot("leaderboard.png")

		// The friends view: dev's demo user u0 has ten friends; the page shows the rows the
		// API answers, the viewer's own marked.
		s.run(chromedp.SetValue(chromedp.CSS("#viewer"), "u0"))
		eventually(t, "the friends view shows the API's friends board", func() error {
			s.run(chromedp.Click(chromedp.CSS("#friends")))
			s.waitJS("the friends view", `!document.getElementById("friends-table").hidden || !document.getElementById("friends-msg").hidden`)
			got := eval[[]row](s, `[...document.querySelectorAll("#friends-table tbody tr")].map(e => ({rank: +e.dataset.rank, member: e.dataset.member, score: +e.dataset.score}))`)
			var fb api.FriendsBoard
			if code := s.get("/v1/friends/u0/boards/arena?period=total&limit=50", &fb); code != http.StatusOK {
				return fmt.Errorf("API answered %d", code)
			}
			var want []row
			for _, e := range fb.Items {
				want = append(want, row{e.Rank, e.Member, e.Score})
			}
			if !slices.ContainsFunc(fb.Items, func(e api.FriendEntry) bool { return e.Member == "u0" }) {
				want = append(want, row{fb.Me.Rank, fb.Me.Member, fb.Me.Score})
			}
			if fb.Total != 11 || !slices.Equal(got, want) {
				return fmt.Errorf("page shows %v, API answers %v (total %d, want 11)", got, want, fb.Total)
			}
			return nil
		})
	})

	t.Run("beyond rank 1000", func(t *testing.T) {
		s.t = t
		// The demo users spread over the local days of their zones: 1,100 more report in UTC.
		now := time.Now().UnixMilli()
		for batch := range 11 {
			var reports []topics.StepReport
			for i := range 100 {
				u := fmt.Sprintf("web-%d", batch*100+i)
				reports = append(reports, topics.StepReport{RequestID: u, UserID: u, Steps: int64(1000 + i), TS: topics.Timestamp{Time: time.UnixMilli(now)}, TZ: "UTC"})
			}
			body, err := json.Marshal(reports)
			if err != nil {
				t.Fatal(err)
			}
			req, err := http.NewRequest(http.MethodPost, s.base+"/v1/steps", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+apiKey)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusAccepted {
				t.Fatalf("POST /v1/steps: %s", res.Status)
			}
		}
		eventually(t, "more than 1000 members on the steps board", func() error {
			var p api.BoardPage
			if s.get("/v1/boards/steps?period=d&limit=1", &p); p.Total <= 1000 {
				return fmt.Errorf("%d members", p.Total)
			}
			return nil
		})
		s.open("/boards?board=steps&offset=980")
		s.waitJS("the last page", `document.querySelectorAll("#board-table tbody tr").length === 20`)
		if got := eval[[]int64](s, `[...document.querySelectorAll("#board-table tbody tr")].map(e => +e.dataset.rank)`); got[0] != 981 || got[19] != 1000 {
			t.Errorf("the last page shows ranks %v, want 981 to 1000", got)
		}
		if b := s.text("beyond"); !strings.HasPrefix(b, "Only the first 1,000 ranks are listed") {
			t.Errorf("beyond message %q", b)
		}
		if !eval[bool](s, `document.getElementById("next").disabled`) {
			t.Error("next page enabled beyond rank 1000")
		}
	})

	t.Run("phone width", func(t *testing.T) {
		s.t = t
		s.run(chromedp.EmulateViewport(375, 800))
		defer s.run(chromedp.EmulateViewport(1000, 1200))
		for _, p := range []string{"/", "/boards?board=arena&period=total"} {
			s.open(p)
			s.waitJS("the page", `document.querySelector("#live-table tbody tr, #podium li") !== null`)
			if w := eval[int](s, `document.documentElement.scrollWidth`); w > 375 {
				t.Errorf("%s is %d px wide at a 375 px viewport", p, w)
			}
		}
		s.screenshot("leaderboard-phone.png")
	})

	t.Run("accessible markup", func(t *testing.T) {
		s.t = t
		// Every control labelled, every table captioned with column headers, one h1 and
		// headings in order, on both pages.
		const js = `(() => {
			const bad = [];
			for (const e of document.querySelectorAll("input, select, button"))
				if (e.tagName === "BUTTON" ? !e.textContent.trim() : e.labels.length === 0) bad.push("unlabelled " + (e.id || e.tagName));
			for (const t of document.querySelectorAll("table"))
				if (!t.caption || t.querySelectorAll("thead th[scope=col]").length !== t.tHead.rows[0].cells.length) bad.push("table " + t.id);
			if (document.querySelectorAll("h1").length !== 1) bad.push("h1 count");
			let level = 1;
			for (const h of document.querySelectorAll("h1, h2, h3")) { const l = +h.tagName[1]; if (l > level + 1) bad.push("heading skips to " + h.textContent); level = l; }
			return bad;
		})()`
		for _, p := range []string{"/", "/boards"} {
			s.open(p)
			s.waitJS("the page", `document.querySelector("#live-table tbody tr, #podium li") !== null`)
			if bad := eval[[]string](s, js); len(bad) > 0 {
				t.Errorf("%s: %v", p, bad)
			}
		}
	})

	t.Run("time travel, empty, redis down", func(t *testing.T) { timeTravel(t, s, bin, redisAddr) })
}

// plantHourBoards sends score ops of 30 members pw0..pw29 (no demo member has such a name) on
// board arena into dev's embedded broker: in the previous hour, in the order pw0, pw1, ...; in
// the current one far above the demo's scores, with each three swapped to b, a, c (pw1, pw0,
// pw2, pw4, pw3, ...). It returns the trend each member's row must show: ▲ 1, ▼ 1 or =.
func plantHourBoards(t *testing.T, devOutput string) map[string]string {
	t.Helper()
	_, rest, _ := strings.Cut(devOutput, "Kafka (kfake):")
	broker, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
	kc := kafka.Config{Brokers: []string{broker}, Partitions: topics.DefaultPartitions}
	cl, err := kc.KgoClient()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	// Ops planted in the last two minutes of an hour would be in the previous hour by the time
	// the page shows the board: then plant them in the next hour.
	if next := time.Now().Truncate(time.Hour).Add(time.Hour); time.Until(next) < 2*time.Minute {
		time.Sleep(time.Until(next) + time.Second)
	}
	now := time.Now()
	prev := now.UTC().Truncate(time.Hour).Add(-30 * time.Minute)
	want := map[string]string{}
	var recs []*kgo.Record
	for i := range 30 {
		pos := i + []int{1, -1, 0}[i%3] // the current rank - 1 of pw<i>
		want[fmt.Sprintf("pw%d", i)] = map[int]string{1: "▼ 1", -1: "▲ 1", 0: "="}[pos-i]
		for _, op := range []topics.ScoreOp{
			{RequestID: fmt.Sprintf("pw-prev-%d", i), Score: int64(10_000 - 10*i), TS: topics.Timestamp{Time: prev}},
			{RequestID: fmt.Sprintf("pw-cur-%d", i), Score: int64(100_000 - 10*pos), TS: topics.Timestamp{Time: now}},
		} {
			op.Board, op.Member, op.Op = "arena", fmt.Sprintf("pw%d", i), topics.OpIncr
			v, err := json.Marshal(op)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, &kgo.Record{Topic: string(kc.Names.Stream(topics.ScoresUpdated)), Key: []byte(op.Member), Value: v, Timestamp: now})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatalf("produce to dev's broker %s: %v", broker, err)
	}
	return want
}

// timeTravel runs serve --history on ClickHouse holding two snapshots and an empty Redis
// database, both behind proxies: the time travel shows the snapshot in effect at the chosen
// time with trends against the one before, the pages say that nothing is there yet, then that
// with a first live snapshot shown, that Redis is down over it, then that ClickHouse is.
func timeTravel(t *testing.T, dev *site, bin, redisAddr string) {
	chAddr, database := testenv.ClickHouseAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	sink, err := rsclickhouse.Open(ctx, chAddr, database)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	if _, err := sink.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	older := time.Now().UTC().Truncate(time.Minute).Add(-40 * time.Minute)
	newer := older.Add(10 * time.Minute)
	version, err := rsclickhouse.TopKVersion(rsclickhouse.MaxTopKCompleteness, newer)
	if err != nil {
		t.Fatal(err)
	}
	snap := func(end time.Time, items ...string) []rsclickhouse.TopKRow {
		var rows []rsclickhouse.TopKRow
		for i, it := range items {
			rows = append(rows, rsclickhouse.TopKRow{Stream: topics.SearchStream, WindowStart: end.Add(-time.Hour), WindowEnd: end,
				Rank: uint32(i + 1), Item: it, Count: uint64(1000 - 100*i), Error: uint64(5 * i), Version: version})
		}
		return rows
	}
	if err := sink.WriteTopK(ctx, slices.Concat(snap(older, "alpha", "beta", "gamma", "delta"), snap(newer, "beta", "alpha", "epsilon", "gamma"))); err != nil {
		t.Fatal(err)
	}

	_, db := testenv.RedisAddr(t) // an empty database: no snapshot, no board yet
	proxy, chProxy := testenv.NewProxy(t, redisAddr), testenv.NewProxy(t, chAddr)
	addr := testenv.FreeAddr(t)
	serve := testenv.StartProcess(t, "serve", bin, "serve", "--history", "--http", addr, "--redis", fmt.Sprintf("redis://%s/%d", proxy.Addr(), db),
		"--clickhouse", chProxy.Addr(), "--clickhouse-database", database)
	s := &site{t: t, base: "http://" + addr, tab: dev.tab}
	eventually(t, "serve listens", func() error {
		if err := serve.Exited(); err != nil {
			t.Fatalf("serve: %v", err)
		}
		if code := s.get("/healthz", nil); code != http.StatusOK {
			return fmt.Errorf("GET /healthz: %d", code)
		}
		return nil
	})

	type ttRow struct {
		Term  string `json:"term"`
		Trend string `json:"trend"`
		Count string `json:"count"`
	}
	const ttJS = `[...document.querySelectorAll("#tt-table tbody tr")].map(e => ({term: e.dataset.term, trend: e.cells[3].textContent, count: e.cells[2].textContent}))`
	waitEnd := func(end time.Time) {
		s.waitJS("the snapshot ending "+end.Format(time.RFC3339), fmt.Sprintf(`document.getElementById("tt-table").dataset.windowEnd === %q && !document.getElementById("tt-table").hidden`, end.Format(time.RFC3339)))
	}
	s.open("/?at=" + url.QueryEscape(newer.Add(3*time.Minute).Format(time.RFC3339)))
	waitEnd(newer)
	want := []ttRow{{"beta", "▲ 1", "1,000exact"}, {"alpha", "▼ 1", "900≥ 895"}, {"epsilon", "new", "800≥ 790"}, {"gamma", "▼ 1", "700≥ 685"}}
	if got := eval[[]ttRow](s, ttJS); !slices.Equal(got, want) {
		t.Errorf("time travel at %s: %v, want %v", newer.Add(3*time.Minute), got, want)
	}
	// The scrubber back to a minute after the older window: its list, with nothing before it.
	back := older.Add(time.Minute)
	eval[chromedp.Void](s, fmt.Sprintf(`(() => { document.getElementById("tt-day").value = %q; const r = document.getElementById("tt-time"); r.value = %d; r.dispatchEvent(new Event("input")); r.dispatchEvent(new Event("change")); })()`,
		back.Format("2006-01-02"), back.Hour()*60+back.Minute()))
	waitEnd(older)
	want = []ttRow{{"alpha", "–", "1,000exact"}, {"beta", "–", "900≥ 895"}, {"gamma", "–", "800≥ 790"}, {"delta", "–", "700≥ 685"}}
	if got := eval[[]ttRow](s, ttJS); !slices.Equal(got, want) {
		t.Errorf("time travel at %s: %v, want %v", back, got, want)
	}
	if o := s.text("tt-at"); o != back.Format("2006-01-02 15:04:05")+" UTC" {
		t.Errorf("scrubber shows %q", o)
	}
	// Before the first snapshot: a message, not an error.
	eval[chromedp.Void](s, fmt.Sprintf(`(r => { r.value = %d; r.dispatchEvent(new Event("change")); })(document.getElementById("tt-time"))`, back.Hour()*60+back.Minute()-2))
	s.waitJS("no snapshot that early", `document.getElementById("tt-banner").textContent.startsWith("No snapshot in the history at or before")`)

	// Nothing in Redis yet: messages, not errors.
	s.waitJS("no live snapshot yet", `document.getElementById("live-empty").textContent.startsWith("No hot-search snapshot yet")`)
	eval[chromedp.Void](s, fmt.Sprintf(`(r => { r.value = %d; r.dispatchEvent(new Event("change")); })(document.getElementById("tt-time"))`, back.Hour()*60+back.Minute()))
	waitEnd(older)
	s.screenshot("time-travel.png")
	s.open("/boards")
	s.waitJS("an empty board", `document.getElementById("empty").textContent.startsWith("Nobody is on this board yet")`)

	// A first snapshot in Redis: the live list shows it; then Redis down: a banner over it, and
	// the time travel still answers from ClickHouse.
	rdb, err := rsredis.Open(fmt.Sprintf("redis://%s/%d", redisAddr, db))
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	live := topics.TopKSnapshot{Stream: topics.SearchStream, WindowStart: newer.Add(-time.Hour), WindowEnd: newer, GeneratedAt: newer,
		Version: newer.UnixMilli(), Items: []topics.TopKItem{{Item: "zeta", Count: 42, Error: 2}, {Item: "eta", Count: 40}}}
	if _, err := rsredis.NewHotWriter(rdb).Write(ctx, live); err != nil {
		t.Fatal(err)
	}
	s.open("/?at=" + url.QueryEscape(newer.Format(time.RFC3339)))
	const liveTerms = `[...document.querySelectorAll("#live-table tbody tr")].map(e => e.dataset.term).join(",") === "zeta,eta" && !document.getElementById("live-table").hidden`
	s.waitJS("the first live list", liveTerms)
	proxy.SetDown(true)
	// The query service answers the last good copy, marked stale: the page says how old.
	s.waitJS("the stale banner over the last list", `document.getElementById("live-banner").textContent.startsWith("Redis is unavailable: showing the last good list, ") && `+liveTerms)
	waitEnd(newer)
	s.screenshot("redis-down.png")
	s.open("/boards")
	s.waitJS("the stale banner over the board read before", `document.getElementById("banner").textContent.startsWith("Redis is unavailable: showing the last good board, ")`)
	// A page never read before (another scope) has no last good copy: 503, and the page says so.
	s.open("/boards?scope=nowhere")
	s.waitJS("the Redis banner", `document.getElementById("banner").textContent.startsWith("Redis is unavailable (503)") && document.getElementById("empty").hidden`)

	// ClickHouse down: the time travel says so.
	chProxy.SetDown(true)
	s.open("/?at=" + url.QueryEscape(newer.Format(time.RFC3339)))
	s.waitJS("the history banner", `document.getElementById("tt-banner").textContent === "The history store is unavailable (503); try again." && document.getElementById("tt-table").hidden`)
}
