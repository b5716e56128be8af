// Package processors holds what every goka processor of rankstream shares: dead-lettering of
// bad records. Each processor lives in its own subpackage (steps, hot, ...), imports topics,
// sketch and this package, and never a sink: sinks are handed in by cmd/.
package processors

import (
	"github.com/lovoo/goka"
	"github.com/rankstream/rankstream/internal/obs"
	"github.com/rankstream/rankstream/topics"
)

// DeadLetter sends the current record's original key and value to the dead-letter topic with
// headers naming its source and the reason. dlq is the dead-letter topic's cluster name; the
// graph must declare goka.Output(dlq, topics.Raw{}).
func DeadLetter(ctx goka.Context, dlq goka.Stream, value []byte, reason error) {
	src := string(ctx.Topic())
	ctx.Emit(dlq, ctx.Key(), value,
		goka.WithCtxEmitHeaders(topics.DLQHeaders(src, ctx.Partition(), ctx.Offset(), reason.Error())))
	obs.DeadLettered.WithLabelValues(src).Inc()
}
