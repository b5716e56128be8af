package redis_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/rankstream/rankstream/board"
	"github.com/rankstream/rankstream/internal/testenv"
	rsredis "github.com/rankstream/rankstream/sinks/redis"
)

// BenchmarkStepsWriter measures updates per second through Submit and pipelined flushes to
// the real redis-server: 200k users in 5 regions, each update acknowledged and raising its
// user's day; cpu-ns/op is this process's CPU (Submit, the flushes' encoding, the
// acknowledgements), redis-cpu-ns/op redis-server's.
func BenchmarkStepsWriter(b *testing.B) {
	rdb := testenv.Redis(b)
	w := runWriter(b, rdb, rsredis.StepsOptions{FlushOptions: rsredis.FlushOptions{Interval: 100 * time.Millisecond}})

	day := board.Day(20261130)
	base := day.FirstInstant().UnixMilli() + 3600_000
	users := make([]string, 200_000)
	for i := range users {
		users[i] = "user" + strconv.Itoa(i)
	}
	regions := []string{"a", "b", "c", "d", "e"}
	acked := make(chan struct{}, 1024)
	ack := func(error) { acked <- struct{}{} }
	b.ReportAllocs()
	b.ResetTimer()
	cpu, rcpu := testenv.ProcessCPU(b), testenv.RedisCPU(b, rdb)
	go func() {
		for i := range b.N {
			w.Submit(&board.StepUpdate{User: users[i%len(users)], Day: day, Steps: int64(i), ReachedMs: base + int64(i%1000), Region: regions[i%5]}, ack)
		}
	}()
	for range b.N {
		<-acked
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
	b.ReportMetric(float64(testenv.ProcessCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(testenv.RedisCPU(b, rdb)-rcpu)/float64(b.N), "redis-cpu-ns/op")
}
