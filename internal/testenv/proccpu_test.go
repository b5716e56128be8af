package testenv

import (
	"os"
	"testing"
	"time"
)

func TestStatCPU(t *testing.T) {
	for _, c := range []struct {
		name, stat string
		want       time.Duration
		ok         bool
	}{
		{"redis", "24632 (redis-server) S 1 24631 24631 0 -1 4194624 412 0 0 0 15 14 0 0 20 0 5 0 4165880 78860288 2637",
			29 * clockTick, true},
		{"a name with spaces and parentheses", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 300 25 0 0 20 0 1 0 1 1 1",
			325 * clockTick, true},
		{"cut short", "7 (java) S 1 7 7 0 -1 0 0 0 0 0 300", 0, false},
		{"no name", "7 java S 1 7 7 0 -1 0 0 0 0 0 300 25 0", 0, false},
		{"not a number", "7 (java) S 1 7 7 0 -1 0 0 0 0 0 x 25 0", 0, false},
	} {
		if got, ok := statCPU(c.stat); got != c.want || ok != c.ok {
			t.Errorf("%s: statCPU = %s %v, want %s %v", c.name, got, ok, c.want, c.ok)
		}
	}
	if _, err := PidCPU(os.Getpid(), "the test"); err != nil {
		t.Error(err)
	}
}
