package testenv

import (
	"testing"
	"time"
)

func TestStatMachine(t *testing.T) {
	for _, tc := range []struct {
		line       string
		busy, idle time.Duration
		ok         bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{"cpu  225829 57 73538 166686 9814 0 16174 2676 0 0", (225829 + 57 + 73538 + 16174) * clockTick, (166686 + 9814) * clockTick, true},
		{"cpu 1 2 3 4 5 6 7 8", (1 + 2 + 3 + 6 + 7) * clockTick, (4 + 5) * clockTick, true},
		{"cpu0 1 2 3 4 5 6 7 8", 0, 0, false}, // one CPU's line, not the machine's
		{"cpu 1 2 3 4 5 6 7", 0, 0, false},    // no steal: not a kernel this reads
		{"cpu 1 2 x 4 5 6 7 8", 0, 0, false},
		{"", 0, 0, false},
	} {
		busy, idle, ok := statMachine(tc.line)
		if busy != tc.busy || idle != tc.idle || ok != tc.ok {
			t.Errorf("statMachine(%q) = %v, %v, %v; want %v, %v, %v", tc.line, busy, idle, ok, tc.busy, tc.idle, tc.ok)
		}
	}
}

func TestMachineCPUGrows(t *testing.T) {
	busy0, idle0, err := MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(100 * time.Millisecond); time.Now().Before(end); { // spin: busy time
	}
	busy1, idle1, err := MachineCPU()
	if err != nil {
		t.Fatal(err)
	}
	if busy1 <= busy0 || idle1 < idle0 {
		t.Errorf("busy %v -> %v, idle %v -> %v over 100 ms of spinning", busy0, busy1, idle0, idle1)
	}
}
