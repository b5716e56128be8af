package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
	"github.com/rankstream/rankstream/topics"
)

// getCounter counts the GET commands a client sends.
type getCounter struct{ n atomic.Int64 }

func (g *getCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (g *getCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
func (g *getCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if cmd.Name() == "get" {
			g.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// hotServer serves the query API with opts from a Redis database of its own, and returns a
// writer of snapshots into it and the count of the server's Redis GETs.
func hotServer(t *testing.T, opts ...api.Option) (*testServer, *rsredis.HotWriter, *getCounter) {
	t.Helper()
	addr, db := testenv.RedisAddr(t)
	rdb := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
	t.Cleanup(func() { rdb.Close() })
	gets := &getCounter{}
	rdb.AddHook(gets)
	srv := serve(t, api.New(rsredis.NewBatchedReader(rdb), slog.New(slog.NewTextHandler(io.Discard, nil)), opts...))
	writer := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
	t.Cleanup(func() { writer.Close() })
	return srv, rsredis.NewHotWriter(writer), gets
}

// hotSnap is the snapshot of the window ending n seconds after a fixed instant, with items
// item0, item1, ... of falling counts.
func hotSnap(n, items int) topics.TopKSnapshot {
	end := time.Date(2026, 11, 30, 12, 0, n, 0, time.UTC)
	s := topics.TopKSnapshot{Stream: topics.SearchStream, WindowStart: end.Add(-time.Hour), WindowEnd: end,
		GeneratedAt: end.Add(time.Second), Version: end.Add(time.Second).UnixMilli()}
	for i := range items {
		s.Items = append(s.Items, topics.TopKItem{Item: fmt.Sprint("item", i), Count: uint64(10_000 - i), Error: 1})
	}
	return s
}

func write(t *testing.T, w *rsredis.HotWriter, s topics.TopKSnapshot) {
	t.Helper()
	if ok, err := w.Write(context.Background(), s); err != nil || !ok {
		t.Fatalf("publish snapshot: %v, %v", ok, err)
	}
}

func cacheCount(result string) float64 {
	var m dto.Metric
	if err := obs.QueryCache.WithLabelValues("hot", result).(prometheus.Metric).Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

func TestHotSearchBeforeTheFirstSnapshot(t *testing.T) {
	srv, _, _ := hotServer(t, api.WithHotCacheTTL(0))
	resp, err := http.Get(srv.URL + "/v1/hot/search")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || !strings.Contains(string(body), `"error":"no hot-search snapshot yet`) {
		t.Fatalf("GET before any snapshot = %d %s", resp.StatusCode, body)
	}
}

func TestHotSearchK(t *testing.T) {
	srv, w, _ := hotServer(t, api.WithHotCacheTTL(0))
	big := hotSnap(0, 150)
	big.MissingPartitions = []int32{3}
	write(t, w, big)
	for _, tt := range []struct {
		query string
		want  int
	}{
		{"", 10}, {"?k=3", 3}, {"?k=0", 0}, {"?k=100", 100}, {"?k=101", 100}, {"?k=100000", 100},
	} {
		var got topics.TopKSnapshot
		get(t, srv, "/v1/hot/search"+tt.query, 200, &got)
		if len(got.Items) != tt.want || tt.want > 0 && got.Items[0] != big.Items[0] {
			t.Errorf("k%s: %d items from %v, want %d from the first", tt.query, len(got.Items), got.Items[:min(1, len(got.Items))], tt.want)
		}
		if !got.WindowEnd.Equal(big.WindowEnd) || got.Version != big.Version || got.Stream != "search" || len(got.MissingPartitions) != 1 {
			t.Errorf("k%s: snapshot fields %+v", tt.query, got)
		}
	}
	write(t, w, hotSnap(5, 20))
	var small topics.TopKSnapshot
	get(t, srv, "/v1/hot/search?k=50", 200, &small)
	if len(small.Items) != 20 || small.MissingPartitions != nil {
		t.Errorf("k=50 of a 20-item snapshot: %d items, missing %v", len(small.Items), small.MissingPartitions)
	}
	get(t, srv, "/v1/hot/search?k=-1", 400, nil)
	get(t, srv, "/v1/hot/search?k=ten", 400, nil)
}

// TestHotSearchCache: within the TTL (the default, 1 s) a new snapshot is not seen and Redis
// is not read; after it, the next request reads the new one. A burst of concurrent requests
// after expiry costs one Redis GET.
func TestHotSearchCache(t *testing.T) {
	const ttl = api.DefaultHotCacheTTL
	srv, w, gets := hotServer(t)
	hits, misses := cacheCount("hit"), cacheCount("miss")

	write(t, w, hotSnap(0, 5))
	var got topics.TopKSnapshot
	get(t, srv, "/v1/hot/search", 200, &got)
	read := time.Now()
	write(t, w, hotSnap(5, 5))
	get(t, srv, "/v1/hot/search", 200, &got)
	if el := time.Since(read); el >= ttl {
		t.Fatalf("the second request came %s after the first, past the TTL: nothing to check", el)
	}
	if got.WindowEnd.Second() != 0 {
		t.Fatalf("a snapshot written within the TTL was served: window end %s", got.WindowEnd)
	}
	if n := gets.n.Load(); n != 1 {
		t.Fatalf("%d Redis GETs for two requests within the TTL, want 1", n)
	}

	time.Sleep(time.Until(read.Add(ttl + 50*time.Millisecond)))
	const burst = 50
	var wg sync.WaitGroup
	ends := make([]time.Time, burst)
	for i := range burst {
		wg.Go(func() {
			var s topics.TopKSnapshot
			get(t, srv, "/v1/hot/search", 200, &s)
			ends[i] = s.WindowEnd
		})
	}
	wg.Wait()
	for i, e := range ends {
		if e.Second() != 5 {
			t.Fatalf("request %d after the TTL saw window end %s, want the new snapshot", i, e)
		}
	}
	if n := gets.n.Load(); n != 2 {
		t.Fatalf("%d Redis GETs after a burst of %d requests past the TTL, want 2 in all", n, burst)
	}
	// 52 requests: the first and one of the burst read Redis, the others were hits.
	if h, m := cacheCount("hit")-hits, cacheCount("miss")-misses; h != 1+burst-1 || m != 2 {
		t.Fatalf("cache metric: %v hits and %v misses, want %d and 2", h, m, burst)
	}
}
