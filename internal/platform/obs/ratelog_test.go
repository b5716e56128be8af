package obs

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestLogLimiterAllow(t *testing.T) {
	var l LogLimiter
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		at   time.Duration
		ok   bool
		held int
	}{
		{0, true, 0}, {10 * time.Millisecond, false, 0}, {999 * time.Millisecond, false, 0},
		{time.Second, true, 2}, {1500 * time.Millisecond, false, 0}, {5 * time.Second, true, 1},
	} {
		held, ok := l.Allow(t0.Add(tt.at))
		if ok != tt.ok || ok && held != tt.held {
			t.Errorf("at %s: Allow = %d, %v; want %d, %v", tt.at, held, ok, tt.held, tt.ok)
		}
	}
}

func TestLogLimiterLog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var l LogLimiter
	l.Log(context.Background(), log, slog.LevelInfo, "below the level") // neither logged nor held
	start := time.Now()
	for range 100 {
		l.Log(context.Background(), log, slog.LevelWarn, "flood", "k", "v")
	}
	most := 1 + int(time.Since(start)/LogEvery) // however slow the machine
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if !strings.Contains(lines[0], "msg=flood k=v not_logged=0") {
		t.Errorf("first line %q; want msg=flood k=v not_logged=0", lines[0])
	}
	if len(lines) > most {
		t.Errorf("%d lines logged of 100 calls within %d s; want at most %d", len(lines), most-1, most)
	}
}
