package kafka

import (
	"context"
	"log/slog"

	"github.com/lovoo/goka"

	"github.com/rankstream/rankstream/internal/platform/obs"
	"github.com/rankstream/rankstream/topics"
)

// DeadLetter sends the current record's key and value to the dead-letter topic with headers
// naming its source and the reason (topics.NewDeadLetter: a value or key too large to keep
// whole is cut, with its size and digest in headers; a tombstone stays one). dlq is the
// dead-letter topic's cluster name; the graph must declare goka.Output(dlq, topics.Raw{}).
// Every dead letter is counted (rankstream_dead_lettered_total{group,topic,reason}, reason
// the class topics.DeadLetterClass) and logged at warn, at
// most once a second per processor (obs.LogLimiter), through the logger of the Run
// running the processor.
func DeadLetter(ctx goka.Context, dlq goka.Stream, value []byte, reason error) {
	obs.DeadLettered(string(ctx.Group()), string(ctx.Topic()), topics.DeadLetterClass(reason)).Inc()
	SetAside(ctx, dlq, value, reason, slog.LevelWarn, "record dead-lettered")
}

// Quarantine sends the current record to a quarantine topic (topics.ScoresQuarantine,
// topics.StepsQuarantine) as DeadLetter does, for a fair-play rule (max_incr, max_rate,
// frozen, max_rise): counted in rankstream_quarantined_total{group,topic,rule} and logged at warn
// with the same rate limit. The graph must declare goka.Output(to, topics.Raw{}).
func Quarantine(ctx goka.Context, to goka.Stream, value []byte, rule string, reason error) {
	obs.Quarantined(string(ctx.Group()), string(ctx.Topic()), rule).Inc()
	SetAside(ctx, to, value, reason, slog.LevelWarn, "record quarantined")
}

// SetAside sends the current record's key and value to topic to with the dead-letter headers
// (topics.NewDeadLetter) and the reason, and logs it at level, at most once a second per
// processor. DeadLetter and Quarantine count what they set aside; the scores processor also
// records its operators' ops with it, as their audit.
func SetAside(ctx goka.Context, to goka.Stream, value []byte, reason error, level slog.Level, msg string) {
	src := string(ctx.Topic())
	dl := topics.NewDeadLetter(src, ctx.Partition(), ctx.Offset(), ctx.Key(), value, reason.Error())
	ctx.Emit(to, dl.Key, dl.Value, goka.WithCtxEmitHeaders(dl.Headers))
	dlog := deadLetterLogOf(ctx.Context())
	log := dlog.log
	if log == nil {
		log = slog.Default()
	}
	dlog.lim.Log(ctx.Context(), log, level, msg,
		"topic", src, "to", string(to), "partition", ctx.Partition(), "offset", ctx.Offset(), "value_bytes", len(value),
		"reason", string(dl.Headers[topics.HeaderReason]))
}

// deadLetterLog is where a processor's dead letters are logged, and their rate limit.
type deadLetterLog struct {
	log *slog.Logger
	lim obs.LogLimiter
}

type deadLetterLogKey struct{}

// fallbackDeadLetterLog serves processors not run by Run (goka's tester without it): they log
// through slog.Default().
var fallbackDeadLetterLog = &deadLetterLog{}

// withDeadLetterLog returns ctx carrying log for the dead letters of the processor run with it:
// goka hands the context of Processor.Run down to the callbacks (goka.Context.Context).
func withDeadLetterLog(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, deadLetterLogKey{}, &deadLetterLog{log: log})
}

func deadLetterLogOf(ctx context.Context) *deadLetterLog {
	if l, ok := ctx.Value(deadLetterLogKey{}).(*deadLetterLog); ok {
		return l
	}
	return fallbackDeadLetterLog
}
