package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/service/api"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// handlerMembers is the size of BenchmarkHandler's boards.
const handlerMembers = 10_000

// discardWriter is a ResponseWriter that keeps only the status and the size of the answer.
type discardWriter struct {
	h    http.Header
	code int
	n    int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(code int)        { d.code = code }
func (d *discardWriter) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHandler: the board reads of BenchmarkReadPath (internal/e2e/serve) through the
// query API's handler in-process, one at a time, on boards of 10k members in the real
// redis-server: cpu-us/op is this process's CPU per request (the handler, its Redis client and
// the batched reader, without net/http's connection handling or redis-server), allocs/op the
// handler's allocations; both barely depend on the machine's other load.
func BenchmarkHandler(b *testing.B) {
	addr, db := testenv.RedisAddr(b)
	rdb := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
	b.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	day := board.DayOf(time.Now(), time.UTC)
	c := board.DayComposite(day)
	// Two score boards of the same members: arena of one shard, arena16 of 16.
	refs := []rsredis.BoardRef{
		{Board: "arena", Period: board.PeriodTotal, PeriodID: "total", Shards: 1},
		{Board: "arena16", Period: board.PeriodTotal, PeriodID: "total", Shards: 16},
	}
	pipe := rdb.Pipeline()
	for i := range handlerMembers {
		m := fmt.Sprintf("m%05d", i)
		v, err := c.Encode(int64(i*7%50_000), day.FirstInstant().UnixMilli()+int64(i)*1000)
		if err != nil {
			b.Fatal(err)
		}
		pipe.ZAdd(ctx, rsredis.StepsGlobalBoard(day), goredis.Z{Score: v, Member: m})
		e, err := rsredis.EncodeEntry(m, int64(i*13%1_000_000), 1_700_000_000_000+int64(i)*1000)
		if err != nil {
			b.Fatal(err)
		}
		for _, ref := range refs {
			shard := rsredis.ShardOf(m, ref.Shards)
			pipe.ZAdd(ctx, rsredis.ScoreBoardKey(ref, shard), goredis.Z{Member: e})
			pipe.HSet(ctx, rsredis.ScoreBoardMembersKey(ref, shard), m, e[:len(e)-len(m)])
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	bs, err := board.NewBoards([]board.Spec{{Name: "arena", Periods: []string{"total"}, TZ: "UTC"},
		{Name: "arena16", Periods: []string{"total"}, TZ: "UTC", Shards: "16"}})
	if err != nil {
		b.Fatal(err)
	}
	qdb, err := rsredis.OpenReader(fmt.Sprintf("redis://%s/%d", addr, db), time.Second)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = qdb.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cached := api.New(rsredis.NewBatchedReader(qdb), log, api.WithBoards(bs))
	uncached := api.New(rsredis.NewBatchedReader(qdb), log, api.WithBoards(bs), api.WithBoardCacheTTL(0))
	member := func(i int) string { return fmt.Sprintf("m%05d", i*7919%handlerMembers) }
	reads := []struct {
		name string
		h    http.Handler
		path func(i int) string
	}{
		{"steps/top20", cached, func(int) string { return "/v1/boards/steps?day=" + day.String() + "&limit=20" }},
		{"steps/top20-nocache", uncached, func(int) string { return "/v1/boards/steps?day=" + day.String() + "&limit=20" }},
		{"steps/rank5", cached, func(i int) string {
			return "/v1/boards/steps/members/" + member(i) + "?day=" + day.String() + "&neighbors=5"
		}},
		{"arena/top20", cached, func(int) string { return "/v1/boards/arena?period=total&limit=20" }},
		{"arena/top20-nocache", uncached, func(int) string { return "/v1/boards/arena?period=total&limit=20" }},
		{"arena/top100-nocache", uncached, func(int) string { return "/v1/boards/arena?period=total&limit=100" }},
		{"arena/rank5", cached, func(i int) string { return "/v1/boards/arena/members/" + member(i) + "?period=total&neighbors=5" }},
		{"arena16/rank5", cached, func(i int) string { return "/v1/boards/arena16/members/" + member(i) + "?period=total&neighbors=5" }},
	}
	for _, rd := range reads {
		b.Run(rd.name, func(b *testing.B) {
			reqs := make([]*http.Request, 256)
			for i := range reqs {
				reqs[i] = httptest.NewRequest(http.MethodGet, rd.path(i), nil)
			}
			w := &discardWriter{h: http.Header{}}
			for i := range 10 { // the board turns hot
				rd.h.ServeHTTP(w, reqs[i%len(reqs)])
			}
			b.ReportAllocs()
			b.SetParallelism(16) // 32 requests at once on 2 cores, as BenchmarkReadPath's workers
			cpu0 := cpuTime(b)
			b.RunParallel(func(pb *testing.PB) {
				w, i := &discardWriter{h: http.Header{}}, rand.IntN(len(reqs))
				for pb.Next() {
					clear(w.h)
					w.code = 0
					// A request is not shared: the mux writes its pattern and path values.
					r := *reqs[i%len(reqs)]
					rd.h.ServeHTTP(w, &r)
					if w.code != http.StatusOK {
						b.Errorf("%s: status %d", r.URL, w.code)
						return
					}
					i++
				}
			})
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
		})
	}
}
