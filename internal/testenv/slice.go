package testenv

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
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
// (Produce: they are acknowledged when it returns). HTTP, when not empty, is the process's
// --http address: with RANKSTREAM_SLICE_PROFILE=<folder> set, Measure saves a CPU profile of the
// timed part and a heap profile at the peak of its live heap there (<group>.cpu.pprof,
// <group>.heap.pprof).
type Slice struct {
	Process *Process
	HTTP    string
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
	// PeakRSSMiB is the process's peak resident memory so far (VmHWM).
	PeakRSSMiB float64
	// BrokerCPUMicros is the broker's CPU per record (the producing of the input included),
	// when RANKSTREAM_SERVERS_DIR names the folder of deploy/local/servers.sh's servers (make
	// test and make bench set it; ServersCPU); 0 otherwise.
	BrokerCPUMicros float64
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
	bcpu0 := brokerCPU()
	b.ResetTimer()
	start := time.Now()
	stopProfile := s.profile(b)
	s.Produce(1, n)
	WaitCommitted(b, s.Admin, s.Group, s.Topic, int64(n), 10*time.Minute)
	elapsed := time.Since(start)
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n-1) }
	c := SliceCosts{
		Rate:           float64(n-1) / elapsed.Seconds(),
		CPUMicros:      per(s.cpu(b) - cpu0),
		RedisCPUMicros: per(RedisCPU(b, s.Redis) - rcpu0),
		RedisCommands:  float64(redisCommands(b, s.Redis)-rcmd0) / float64(n-1),
		RedisWrites:    float64(redisWrites(b, s.Redis)-rw0) / float64(n-1),
	}
	if bcpu0 >= 0 {
		c.BrokerCPUMicros = per(brokerCPU() - bcpu0)
	}
	stopProfile()
	peak, err := s.Process.PeakRSS()
	if err != nil {
		b.Fatal(err)
	}
	c.PeakRSSMiB = float64(peak) / (1 << 20)
	return c
}

// profile starts a CPU profile of the process when RANKSTREAM_SLICE_PROFILE names a folder
// and the process's HTTP address is known: 15 s from 1 s into the timed part (a run of 1M
// records at full speed ends within it; the idle rest adds few samples). Meanwhile, until the
// timed part ends, it samples the heap every second and keeps the heap profile taken at the
// largest heap goal (NextGC, twice the live heap at GOGC 100): the live heap at its peak,
// which sets the peak RSS. The returned function, called when the timed part ends, waits for
// the CPU profile and saves both. The profiles tell where the time and memory go; the figures
// come from /proc and INFO.
func (s Slice) profile(b *testing.B) (wait func()) {
	dir := os.Getenv("RANKSTREAM_SLICE_PROFILE")
	if dir == "" || s.HTTP == "" {
		return func() {}
	}
	get := func(query string) ([]byte, error) {
		resp, err := http.Get("http://" + s.HTTP + "/debug/pprof/" + query)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", resp.Status, body)
		}
		return body, err
	}
	save := func(name string, body []byte, err error) {
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, s.Group+"."+name+".pprof"), body, 0o644)
		}
		if err != nil {
			b.Errorf("testenv: profile %s: %v", name, err)
		}
	}
	cpuDone, stop, heapDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(cpuDone)
		time.Sleep(time.Second)
		body, err := get("profile?seconds=15")
		save("cpu", body, err)
	}()
	var heap []byte
	var heapErr error
	go func() {
		defer close(heapDone)
		var most int64 = -1
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			// The text form ends with the runtime's MemStats, NextGC among them.
			text, err := get("heap?debug=1")
			var goal int64
			if err == nil {
				_, after, _ := strings.Cut(string(text), "\n# NextGC = ")
				num, _, _ := strings.Cut(after, "\n")
				goal, err = strconv.ParseInt(num, 10, 64)
			}
			if err == nil && goal > most {
				var body []byte
				if body, err = get("heap"); err == nil {
					most, heap = goal, body
				}
			}
			if err != nil && heap == nil {
				heapErr = err
			}
		}
	}()
	return func() {
		close(stop)
		<-heapDone
		<-cpuDone
		if heap == nil && heapErr == nil { // a timed part shorter than a second
			heap, heapErr = get("heap")
		}
		save("heap", heap, heapErr)
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
	b.ReportMetric(c.PeakRSSMiB, "peak-RSS-MiB")
	if c.BrokerCPUMicros > 0 {
		b.ReportMetric(c.BrokerCPUMicros, "broker-cpu-µs/"+unit)
	}
}

// brokerCPU is the CPU time so far of the broker of deploy/local/servers.sh's folder
// (ServersCPU), -1 when RANKSTREAM_SERVERS_DIR does not name one.
func brokerCPU() time.Duration {
	if d, ok := ServersCPU()["kafka"]; ok {
		return d
	}
	return -1
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
