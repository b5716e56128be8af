package obs

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// LogEvery is how often a LogLimiter lets a line through.
const LogEvery = time.Second

// LogLimiter lets one log line through per LogEvery and counts the lines it held back, for
// messages a flood of bad input or a failing server would otherwise repeat thousands of times
// a second (what they stand for is counted in a metric; the log shows an example and how many
// were not logged). The zero value is ready to use; it is safe for concurrent use.
type LogLimiter struct {
	mu   sync.Mutex
	last time.Time
	held int
}

// Allow reports whether to log now, and how many lines were held back since the last one let
// through.
func (l *LogLimiter) Allow(now time.Time) (held int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.last) < LogEvery {
		l.held++
		return 0, false
	}
	held = l.held
	l.last, l.held = now, 0
	return held, true
}

// Log logs msg with args at level through log if Allow lets it through now, adding
// not_logged: the count of lines held back since the last one.
func (l *LogLimiter) Log(ctx context.Context, log *slog.Logger, level slog.Level, msg string, args ...any) {
	if !log.Enabled(ctx, level) {
		return
	}
	if held, ok := l.Allow(time.Now()); ok {
		log.Log(ctx, level, msg, append(args, "not_logged", held)...)
	}
}
