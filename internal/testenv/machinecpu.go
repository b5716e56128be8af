package testenv

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// MachineCPU returns the processor time the whole machine has spent so far, busy and idle,
// from /proc/stat: busy is user, nice, system, irq and softirq time of every CPU, so it holds
// the kernel's network work that runs in softirq and is charged to no process (on loopback,
// a large part of a small request's cost); idle is idle and iowait. The hypervisor's steal
// is in neither. The times are in clock ticks (10 ms).
func MachineCPU() (busy, idle time.Duration, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("testenv: machine cpu: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	busy, idle, ok := statMachine(line)
	if !ok {
		return 0, 0, fmt.Errorf("testenv: machine cpu: /proc/stat line %q", line)
	}
	return busy, idle, nil
}

// statMachine reads /proc/stat's first line, "cpu user nice system idle iowait irq softirq
// steal ...", into busy (user, nice, system, irq, softirq) and idle (idle, iowait) time.
func statMachine(line string) (busy, idle time.Duration, ok bool) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	var t [8]int64
	for i := range t {
		v, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return 0, 0, false
		}
		t[i] = v
	}
	return time.Duration(t[0]+t[1]+t[2]+t[5]+t[6]) * clockTick, time.Duration(t[3]+t[4]) * clockTick, true
}
