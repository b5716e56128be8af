package testenv

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/twmb/franz-go/pkg/kadm"
)

// Slice is what a slice benchmark measures: a `rankstream process` (Process) whose group
// (Group) reads Topic and writes to Redis (Redis, the database the process writes: INFO is
// server-wide), and how the records lo to hi (excluded) of the benchmark's input reach Topic
// (Produce: they are acknowledged when it returns).
type Slice struct {
	Process *Process
	Redis   *goredis.Client
	Admin   *kadm.Client
	Group   string
	Topic   string
	Produce func(lo, hi int)
}

// SliceCosts are a slice's rate and what a record cost.
type SliceCosts struct {
	Rate float64 // records a second
	// CPUMicros and RedisCPUMicros are the CPU of the process and of redis-server, and
	// RedisCommands the commands redis-server ran (those run by scripts included), per record;
	// RedisWrites those of them that write (redis-server's own "write" flag: SET, ZADD,
	// EXPIRE, ... but not the GETs of a script or the EVALSHA calls themselves).
	CPUMicros, RedisCPUMicros, RedisCommands, RedisWrites float64
}

// Measure produces the input's record 0 and waits until the group committed it (start-up left out),
// then produces the rest and times them until the group's committed offsets cover every
// record of the n, which happens only after Redis acknowledged what they cover. The
// benchmark's timer runs over the timed part only. Topic must hold nothing before.
func (s Slice) Measure(b *testing.B, n int) SliceCosts {
	b.Helper()
	s.Produce(0, 1)
	WaitCommitted(b, s.Admin, s.Group, s.Topic, 1, 5*time.Minute)
	cpu0, rcpu0, rcmd0, rw0 := s.cpu(b), RedisCPU(b, s.Redis), redisCommands(b, s.Redis), redisWrites(b, s.Redis)
	b.ResetTimer()
	start := time.Now()
	s.Produce(1, n)
	WaitCommitted(b, s.Admin, s.Group, s.Topic, int64(n), 10*time.Minute)
	elapsed := time.Since(start)
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n-1) }
	return SliceCosts{
		Rate:           float64(n-1) / elapsed.Seconds(),
		CPUMicros:      per(s.cpu(b) - cpu0),
		RedisCPUMicros: per(RedisCPU(b, s.Redis) - rcpu0),
		RedisCommands:  float64(redisCommands(b, s.Redis)-rcmd0) / float64(n-1),
		RedisWrites:    float64(redisWrites(b, s.Redis)-rw0) / float64(n-1),
	}
}

// Report reports the costs as <unit>s/s, cpu-µs/<unit>, redis-cpu-µs/<unit>,
// redis-cmds/<unit> and redis-writes/<unit>.
func (c SliceCosts) Report(b *testing.B, unit string) {
	b.ReportMetric(c.Rate, unit+"s/s")
	b.ReportMetric(c.CPUMicros, "cpu-µs/"+unit)
	b.ReportMetric(c.RedisCPUMicros, "redis-cpu-µs/"+unit)
	b.ReportMetric(c.RedisCommands, "redis-cmds/"+unit)
	b.ReportMetric(c.RedisWrites, "redis-writes/"+unit)
}

func (s Slice) cpu(b *testing.B) time.Duration {
	d, err := s.Process.CPU()
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// RedisCPU is redis-server's CPU time so far (INFO cpu: used_cpu_sys + used_cpu_user).
func RedisCPU(t testing.TB, rdb *goredis.Client) time.Duration {
	t.Helper()
	var sum float64
	for _, f := range []string{"used_cpu_sys", "used_cpu_user"} {
		sum += redisInfoNumber(t, rdb, "cpu", f)
	}
	return time.Duration(sum * float64(time.Second))
}

// redisCommands is how many commands redis-server processed so far, those run by scripts
// included (INFO stats: total_commands_processed).
func redisCommands(t testing.TB, rdb *goredis.Client) int64 {
	return int64(redisInfoNumber(t, rdb, "stats", "total_commands_processed"))
}

// redisWrites is how many commands that write redis-server processed so far, those run by
// scripts included: the calls of INFO commandstats whose command COMMAND INFO flags "write".
func redisWrites(t testing.TB, rdb *goredis.Client) int64 {
	t.Helper()
	ctx := context.Background()
	cmds, err := rdb.Command(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, line := range strings.Split(info, "\r\n") {
		// cmdstat_zadd:calls=12,usec=34,...
		name, stats, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		calls, _, _ := strings.Cut(strings.TrimPrefix(stats, "calls="), ",")
		c, err := strconv.ParseInt(calls, 10, 64)
		if !ok || err != nil || cmds[name] == nil || !slices.Contains(cmds[name].Flags, "write") {
			continue
		}
		n += c
	}
	return n
}

func redisInfoNumber(t testing.TB, rdb *goredis.Client, section, field string) float64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("INFO %s %s: %q", section, field, v)
			}
			return f
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}
