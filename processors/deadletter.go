// Package processors holds what every goka processor of rankstream shares: dead-lettering of
// bad records. Each processor lives in its own subpackage (steps, hot, ...), imports topics,
// sketch and this package, and never a sink: sinks are handed in by cmd/.
package processors

import (
	"github.com/lovoo/goka"
	"github.com/rankstream/rankstream/internal/obs"
	"github.com/rankstream/rankstream/topics"
)

// DeadLetter sends the current record's key and value to the dead-letter topic with headers
// naming its source and the reason (topics.NewDeadLetter: a value or key too large to keep
// whole is cut, with its size and digest in headers; a tombstone stays one). dlq is the
// dead-letter topic's cluster name; the graph must declare goka.Output(dlq, topics.Raw{}).
func DeadLetter(ctx goka.Context, dlq goka.Stream, value []byte, reason error) {
	src := string(ctx.Topic())
	dl := topics.NewDeadLetter(src, ctx.Partition(), ctx.Offset(), ctx.Key(), value, reason.Error())
	ctx.Emit(dlq, dl.Key, dl.Value, goka.WithCtxEmitHeaders(dl.Headers))
	obs.DeadLettered.WithLabelValues(src).Inc()
}
