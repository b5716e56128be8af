package friendse2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// Shape of the friends board benchmark: an open-model load (vegeta's constant pacer) of
// benchRate requests/s for benchFor per viewer, each request a page of 20 rows.
const (
	benchRate = 50
	benchFor  = 10 * time.Second
	rawReads  = 1_000
)

// BenchmarkFriendsBoard: `rankstream serve` answering GET /v1/friends/{user}/steps for a
// viewer with 5,000 friends (the bound) and one with 200, every friend with a value that
// day, at a fixed rate: the latencies p50 and p99 seen by the client (vegeta), beside the raw
// Redis cost of the same reads (SMEMBERS, then the values in pipelined ZMSCORE batches)
// measured one after another in this process. Target: p99 <= 10 ms with 5,000.
func BenchmarkFriendsBoard(b *testing.B) {
	bin := testenv.Rankstream(b)
	addr, db := testenv.RedisAddr(b)
	rdb := goredis.NewClient(&goredis.Options{Addr: addr, DB: db})
	b.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	day := board.DayOf(time.Now(), time.UTC)
	c := board.DayComposite(day)
	base := day.FirstInstant().Add(20 * time.Hour).UnixMilli()
	var zs []goredis.Z
	var fs []any
	for i := range 5_000 {
		f := fmt.Sprintf("friend-%04d", i)
		fs = append(fs, f)
		score, err := c.Encode(int64(i*7%30_000), base+int64(i))
		if err != nil {
			b.Fatal(err)
		}
		zs = append(zs, goredis.Z{Score: score, Member: f})
	}
	zs = append(zs, goredis.Z{Score: 1 << 30, Member: "viewer-5000"}, goredis.Z{Score: 1 << 30, Member: "viewer-200"})
	for _, err := range []error{
		rdb.ZAdd(ctx, rsredis.StepsGlobalBoard(day), zs...).Err(),
		rdb.SAdd(ctx, rsredis.FriendsKey("viewer-5000"), fs...).Err(),
		rdb.SAdd(ctx, rsredis.FriendsKey("viewer-200"), fs[:200]...).Err(),
	} {
		if err != nil {
			b.Fatal(err)
		}
	}
	httpAddr := testenv.FreeAddr(b)
	testenv.StartProcess(b, "serve", bin, "serve", "--redis", fmt.Sprintf("redis://%s/%d", addr, db), "--http", httpAddr, "--log-level", "warn")
	testenv.WaitFor(b, 30*time.Second, "serve to be ready", func() bool {
		resp, err := http.Get("http://" + httpAddr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	r := rsredis.NewReader(rdb)
	for _, viewer := range []string{"viewer-5000", "viewer-200"} {
		b.Run("friends="+viewer[len("viewer-"):], func(b *testing.B) {
			for range b.N {
				url := fmt.Sprintf("http://%s/v1/friends/%s/steps?day=%s&limit=20", httpAddr, viewer, day)
				attacker := vegeta.NewAttacker()
				var m vegeta.Metrics
				for res := range attacker.Attack(vegeta.NewStaticTargeter(vegeta.Target{Method: "GET", URL: url}),
					vegeta.Rate{Freq: benchRate, Per: time.Second}, benchFor, viewer) {
					m.Add(res)
				}
				m.Close()
				if m.Success != 1 {
					b.Fatalf("%s: success ratio %.4f, errors %v", viewer, m.Success, m.Errors)
				}
				raw := make([]time.Duration, rawReads)
				for i := range raw {
					start := time.Now()
					friends, err := r.Friends(ctx, viewer)
					if err == nil {
						_, err = r.StepsStandings(ctx, day, append(friends, viewer))
					}
					if err != nil {
						b.Fatal(err)
					}
					raw[i] = time.Since(start)
				}
				slices.Sort(raw)
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
				b.ReportMetric(ms(m.Latencies.P50), "p50-ms")
				b.ReportMetric(ms(m.Latencies.P99), "p99-ms")
				b.ReportMetric(ms(raw[len(raw)/2]), "redis-p50-ms")
				b.ReportMetric(ms(raw[len(raw)*99/100]), "redis-p99-ms")
				b.ReportMetric(float64(m.Requests)/benchFor.Seconds(), "req/s")
			}
		})
	}
}
