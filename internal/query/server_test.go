package query

import (
	"testing"
	"time"
)

func TestRateLog(t *testing.T) {
	var l rateLog
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		at      time.Duration
		ok      bool
		dropped int
	}{
		{0, true, 0}, {10 * time.Millisecond, false, 0}, {999 * time.Millisecond, false, 0},
		{time.Second, true, 2}, {1500 * time.Millisecond, false, 0}, {5 * time.Second, true, 1},
	} {
		n, ok := l.allow(t0.Add(tt.at))
		if ok != tt.ok || ok && n != tt.dropped {
			t.Errorf("at %s: allow = %d, %v; want %d, %v", tt.at, n, ok, tt.dropped, tt.ok)
		}
	}
}
