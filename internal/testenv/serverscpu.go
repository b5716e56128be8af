package testenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is Linux's USER_HZ, the unit of the CPU times in /proc/<pid>/stat (100 on every
// mainstream kernel and architecture).
const clockTick = 10 * time.Millisecond

// ServersCPU returns the CPU time (user and system) each server of deploy/local/servers.sh has
// used so far, by its name there (kafka, redis, clickhouse): the servers a benchmark shares the
// machine with, whose work for it is not in its own process's CPU. It reads their pid files in
// RANKSTREAM_SERVERS_DIR (make test and make bench set it; it must name the servers the test's
// addresses point to) and /proc; it returns nil without that folder, and leaves out a server
// whose pid file or process it cannot read. The times are in clock ticks (10 ms).
func ServersCPU() map[string]time.Duration {
	dir := os.Getenv("RANKSTREAM_SERVERS_DIR")
	if dir == "" {
		return nil
	}
	cpu := map[string]time.Duration{}
	for _, name := range []string{"kafka", "redis", "clickhouse"} {
		pid, err := os.ReadFile(filepath.Join(dir, name+".pid"))
		if err != nil {
			continue
		}
		if d, ok := pidCPU(strings.TrimSpace(string(pid))); ok {
			cpu[name] = d
		}
	}
	return cpu
}

// pidCPU reads the user and system CPU time of process pid from /proc/<pid>/stat.
func pidCPU(pid string) (time.Duration, bool) {
	stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return 0, false
	}
	return statCPU(string(stat))
}

// statCPU returns the user and system CPU time in a /proc/<pid>/stat line. The command name,
// in parentheses, may hold spaces and parentheses: utime and stime are the 12th and 13th
// fields after its last ')' (fields 14 and 15 of proc(5)).
func statCPU(stat string) (time.Duration, bool) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, false
	}
	f := strings.Fields(stat[end+1:])
	if len(f) < 13 {
		return 0, false
	}
	user, err1 := strconv.ParseInt(f[11], 10, 64)
	sys, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(user+sys) * clockTick, true
}
