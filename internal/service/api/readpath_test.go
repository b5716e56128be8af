package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// commandCalls returns INFO commandstats' calls of cmd (lower case, e.g. "zrevrange").
func commandCalls(t *testing.T, rdb *goredis.Client, cmd string) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls="); ok {
			n, err := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}

func boardCache(result string) float64 {
	var m dto.Metric
	if err := obs.QueryCache.WithLabelValues("boards", result).(prometheus.Metric).Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

// privateServer is the query API with every default on a redis-server of the test's own (to
// stop and start), seeded with 200 members on the day's steps board.
func privateServer(t *testing.T) (*testenv.RedisServer, string) {
	t.Helper()
	rs := testenv.StartRedisServer(t)
	rdb, err := rsredis.OpenReader(rs.Addr(), api.DefaultRedisTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	seed(t, rs.Client(), 200)
	return rs, serve(t, api.New(rsredis.NewBatchedReader(rdb), slog.New(slog.NewTextHandler(io.Discard, nil)))).URL
}

// TestHotBoardBurstReadsRedisOncePerTTL: a burst of 10k page views of one board, 32 at a
// time, costs at most one Redis read of the board per DefaultBoardCacheTTL (plus the
// HotBoardReads reads before the board counts as hot), counted on the server (INFO
// commandstats); pages within the Top-100 come from the cached Top-100 and are exact; a
// member's rank still reads Redis every time.
func TestHotBoardBurstReadsRedisOncePerTTL(t *testing.T) {
	rs, url := privateServer(t)
	admin := rs.Client()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	t.Cleanup(client.CloseIdleConnections)

	paths := []string{"/v1/boards/steps?day=20261130&limit=10", "/v1/boards/steps?day=20261130&offset=90&limit=10",
		"/v1/boards/steps?period=d:20261130&limit=100", "/v1/boards/steps?day=20261130&offset=40&limit=20"}
	want := make([][]byte, len(paths)) // every page once, from Redis (the board is cold)
	for i, p := range paths {
		code, body, _ := fetch(client, url+p)
		if code != 200 {
			t.Fatalf("GET %s = %d %s", p, code, body)
		}
		want[i] = body
	}
	hits0, misses0 := boardCache("hit"), boardCache("miss")
	reads0 := commandCalls(t, admin, "zrevrange")
	const burst = 10_000
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Go(func() {
			for i := w; i < burst; i += 32 {
				p := i % len(paths)
				code, body, _ := fetch(client, url+paths[p])
				if code != 200 || string(body) != string(want[p]) {
					t.Errorf("GET %s = %d %.300s, want %.300s", paths[p], code, body, want[p])
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	reads := commandCalls(t, admin, "zrevrange") - reads0
	limit := int64(api.HotBoardReads) + int64(took/api.DefaultBoardCacheTTL) + 2
	t.Logf("%d page views in %s: %d Redis reads of the board (at most %d); cache hits %+.0f, misses %+.0f",
		burst, took.Round(time.Millisecond), reads, limit, boardCache("hit")-hits0, boardCache("miss")-misses0)
	if reads > limit {
		t.Errorf("%d Redis reads of the board for %d views in %s, want at most %d", reads, burst, took, limit)
	}
	if hits := boardCache("hit") - hits0; hits < burst-float64(limit) {
		t.Errorf("%.0f cache hits of %d views", hits, burst)
	}

	// A member's rank is read from Redis every time, hot board or not.
	ranks0 := commandCalls(t, admin, "zrevrank")
	for range 20 {
		if code, body, _ := fetch(client, url+"/v1/boards/steps/members/m007?day=20261130&neighbors=2"); code != 200 {
			t.Fatalf("member: %d %s", code, body)
		}
	}
	if n := commandCalls(t, admin, "zrevrank") - ranks0; n != 20 {
		t.Errorf("20 reads of a member's rank ran ZREVRANK %d times, want 20", n)
	}
}

// TestRedisDownAnswersStale: with its redis-server killed, the query API answers every board
// and hot-search read it answered before from that last good copy, marked stale with its age,
// each within 300 ms (go-redis's default of five dials 100 ms apart would take 400 ms; one
// dial to a stopped server is refused in milliseconds, 116-124 ms seen at a load average of 20); a read never answered before gets 503; /readyz says Redis is down; and
// once Redis is back (same data), answers are fresh again without a restart.
func TestRedisDownAnswersStale(t *testing.T) {
	rs, url := privateServer(t)
	write(t, rsredis.NewHotWriter(rs.Client()), hotSnap(0, 5))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: time.Minute}
	t.Cleanup(client.CloseIdleConnections)
	paths := []string{"/v1/boards/steps?day=20261130&limit=5", "/v1/boards/steps?day=20261130&offset=150&limit=5",
		"/v1/boards/steps/members/m010?day=20261130&neighbors=2", "/v1/boards/steps?period=d:20261130&limit=3",
		"/v1/hot/search?k=3"}
	fresh := map[string][]byte{}
	for _, p := range paths {
		code, body, _ := fetch(client, url+p)
		if code != 200 || strings.Contains(string(body), "stale") {
			t.Fatalf("GET %s = %d %s", p, code, body)
		}
		fresh[p] = body
	}
	rs.Kill()
	down := time.Now()
	time.Sleep(api.DefaultHotCacheTTL) // past the caches' TTLs: every read asks Redis
	for round := range 3 {
		for _, p := range paths {
			code, body, took := fetch(client, url+p)
			var v map[string]any
			if code != 200 || json.Unmarshal(body, &v) != nil || v["stale"] != true || took > 300*time.Millisecond {
				t.Fatalf("round %d: GET %s with Redis down = %d after %s: %.300s", round, p, code, took, body)
			}
			age := time.Duration(v["stale_age_ms"].(float64)) * time.Millisecond
			if age < time.Since(down)-time.Second || age > time.Since(down)+time.Second { // the copy is from before the kill
				t.Errorf("GET %s: stale_age_ms %s, Redis down for %s", p, age, time.Since(down))
			}
			delete(v, "stale")
			delete(v, "stale_age_ms")
			var old map[string]any
			_ = json.Unmarshal(fresh[p], &old)
			if got, _ := json.Marshal(v); string(got) != string(mustJSON(t, old)) {
				t.Errorf("GET %s stale: %s, want the last good copy %s", p, got, fresh[p])
			}
		}
	}
	if code, body, took := fetch(client, url+"/v1/boards/steps/members/m011?day=20261130"); code != http.StatusServiceUnavailable || took > time.Second {
		t.Errorf("a read never answered before, with Redis down: %d after %s: %s", code, took, body)
	}
	if code, body, _ := fetch(client, url+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(string(body), "redis down") {
		t.Errorf("/readyz with Redis down: %d %s", code, body)
	}

	rs.Start()
	waitFor(t, "fresh answers after Redis returned", func() bool {
		for _, p := range append(paths, "/readyz") {
			if code, body, _ := fetch(client, url+p); code != 200 || strings.Contains(string(body), "stale") {
				return false
			}
		}
		return true
	})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
