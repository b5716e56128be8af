package testenv

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

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
		n, err := strconv.Atoi(strings.TrimSpace(string(pid)))
		if err != nil {
			continue
		}
		if d, err := PidCPU(n, name); err == nil {
			cpu[name] = d
		}
	}
	return cpu
}
