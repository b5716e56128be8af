// Package obs is rankstream's observability plumbing: the Prometheus metrics every service
// exports, the /metrics, /healthz and /readyz handlers, and the slog logger set-up.
//
// It imports only the standard library and the Prometheus client.
package obs

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics of the pipeline. Labels are low-cardinality: group, topic, partition, reason class,
// sink, route. Metrics whose labels callers must get right are reached through functions.
var (
	eventsIn = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_events_in_total", Help: "Records consumed by processors, by consumer group and topic.",
	}, []string{"group", "topic"})
	eventsOutcome = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_events_outcome_total", Help: "What valid records did to the state, by consumer group, topic and outcome (steps: improved, duplicate, stale; scores: applied, duplicate; friends: refused).",
	}, []string{"group", "topic", "outcome"})
	deadLettered = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_dead_lettered_total", Help: "Records sent to the dead-letter topic, by consumer group, source topic and reason (the field the record broke: ts, steps, json, value, ...; other for any other failure).",
	}, []string{"group", "topic", "reason"})
	quarantined = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_quarantined_total", Help: "Records fair play set aside in a quarantine topic instead of applying them, by consumer group, source topic and rule (max_incr, max_rate, frozen; steps: max_rise).",
	}, []string{"group", "topic", "rule"})
	OperatorOps = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_operator_ops_total", Help: "Operator ops (ban, unban, release) applied and recorded in the quarantine topic as the audit, by op.",
	}, []string{"op"})
	HotDropped = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_hot_dropped_total", Help: "Search queries the hot-search windows dropped, by reason: late (their window was already emitted), early (further ahead than the lookahead), full (a window held 2^32-1 events). A restart counts the drops of the loop records it re-reads again.",
	}, []string{"reason"})
	HotUnwindowed = promauto.NewCounter(prometheus.CounterOpts{
		Name: "rankstream_hot_unwindowed_total", Help: "Search queries dated before the first hot-search window, which begins once every input partition has begun: in no window. Those of a partition left out of the windows (behind them, or idle) are late drops instead.",
	})
	HotLoopFlushes = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_hot_loop_flushes_total", Help: "Flushes of the hot group's buffered search terms to its loop topic (one record per loop partition), by reason: size (256 KiB buffered), time (the oldest waited 50 ms), marker (a watermark marker follows), end (the partition was revoked or the processor stops).",
	}, []string{"reason"})
	HotLoopFlushQueries = promauto.NewHistogram(prometheus.HistogramOpts{
		Name: "rankstream_hot_loop_flush_queries", Help: "Search terms per flush to the hot group's loop topic.",
		Buckets: prometheus.ExponentialBuckets(1, 4, 10),
	})
	HotLoopRecords = promauto.NewCounter(prometheus.CounterOpts{
		Name: "rankstream_hot_loop_records_total", Help: "Records the hot group wrote to its loop topic (terms records and watermark markers); divided by rankstream_hot_loop_flushes_total, the records per flush.",
	})
	HotLoopPending = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "rankstream_hot_loop_pending_queries", Help: "Search queries the hot group routed and its loop topic has not yet acknowledged (buffered, updated every 25 ms, or written): their input offsets wait to be committed.",
	})
	ConsumerLag = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rankstream_consumer_lag", Help: "Records behind the high-water mark, by consumer group and by the input partition this instance owns (topic, partition); a partition it no longer owns is dropped.",
	}, []string{"group", "topic", "partition"})
	ProcessorUp = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rankstream_processor_up", Help: "1 while a supervised unit (a goka processor with what belongs to it) runs, 0 while it waits to be restarted.",
	}, []string{"unit"})
	ProcessorRestarts = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_processor_restarts_total", Help: "Restarts of a supervised unit after it failed (a broker gone, a store that failed), by unit.",
	}, []string{"unit"})
	StepsWritesSkipped = promauto.NewCounter(prometheus.CounterOpts{
		Name: "rankstream_steps_writes_skipped_total", Help: "Valid step reports whose day's effect this instance had already handed to Redis unchanged since it took the partition: acknowledged without a write.",
	})
	HistorySkipped = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_history_skipped_total", Help: "Records of a topic written to the history store (hot.history's snapshots, the scores table's member states) that it can never take (undecodable or invalid rows), skipped and logged, by topic.",
	}, []string{"topic"})
	HotSnapshotsRejected = promauto.NewCounter(prometheus.CounterOpts{
		Name: "rankstream_hot_snapshots_rejected_total", Help: "Merged hot-search snapshots that failed validation and were not published (logged; their partials stay in the merge table).",
	})
	SinkWriteSeconds = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rankstream_sink_write_seconds", Help: "Latency of one sink flush (one pipeline or batch).",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
	}, []string{"sink"})
	SinkWriteErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_sink_write_errors_total", Help: "Failed sink flushes (each is retried with backoff).",
	}, []string{"sink"})
	SinkRowsWritten = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_sink_rows_written_total", Help: "Rows written by a sink, by sink (a replay writes its rows again and counts them again).",
	}, []string{"sink"})
	SinkRowsSkipped = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_sink_rows_skipped_total", Help: "Updates a sink can never write (a board it does not know, a value its encoding cannot hold), skipped and logged, by sink.",
	}, []string{"sink"})
	SinkPending = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rankstream_sink_pending", Help: "Records queued for the next sink flush (those of a flush under way not included).",
	}, []string{"sink"})
	httpRequests = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_http_requests_total", Help: "HTTP requests by route and status code.",
	}, []string{"route", "code"})
	QueryCache = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_query_cache_requests_total", Help: "Requests of the query service's local caches, by cache and result: hit (answered without a Redis read of its own) or miss (read Redis).",
	}, []string{"cache", "result"})
	httpSeconds = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rankstream_http_request_seconds", Help: "HTTP request latency by route and status code.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	}, []string{"route", "code"})
	BoardUpdateLatency = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rankstream_board_update_latency_seconds", Help: "From an update's event time (the ts that reached the value) to Redis acknowledging the flush that wrote it, by sink (redis-steps, redis-scores). A replay or a redelivery observes old event times.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
	}, []string{"sink"})
	HotSnapshotFreshness = promauto.NewHistogram(prometheus.HistogramOpts{
		Name: "rankstream_hot_snapshot_freshness_seconds", Help: "From a hot-search window's end to Redis acknowledging its snapshot (snapshots that replaced the stored one).",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
	})
	HotSnapshotWindowEnd = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "rankstream_hot_snapshot_window_end_timestamp_seconds", Help: "Window end (Unix time) of the last hot-search snapshot this instance published to Redis; time() minus it is the snapshot's age.",
	})
	HotSlide = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "rankstream_hot_slide_seconds", Help: "The hot-search windows' slide (--hot-slide) of this instance: a snapshot is due every slide.",
	})
	redisCallSeconds = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rankstream_redis_call_seconds", Help: "Latency of one Redis call (a command by name, or a pipeline), by client (writer: the sinks; reader: the read API) and call.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	}, []string{"client", "call"})
	redisCallErrors = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_redis_call_errors_total", Help: "Redis calls that failed (a missing key is not a failure), by client and call.",
	}, []string{"client", "call"})
)

// EventsIn is the counter of records group consumed from topic.
func EventsIn(group, topic string) prometheus.Counter { return eventsIn.WithLabelValues(group, topic) }

// EventsOutcome is the counter of valid records of topic whose outcome in group was outcome.
func EventsOutcome(group, topic, outcome string) prometheus.Counter {
	return eventsOutcome.WithLabelValues(group, topic, outcome)
}

// DeadLettered is the counter of records of topic that group sent to the dead-letter topic for
// reason (a bounded class: topics.DeadLetterClass).
func DeadLettered(group, topic, reason string) prometheus.Counter {
	return deadLettered.WithLabelValues(group, topic, reason)
}

// Quarantined is the counter of records of topic that group set aside in a quarantine topic
// for a fair-play rule.
func Quarantined(group, topic, rule string) prometheus.Counter {
	return quarantined.WithLabelValues(group, topic, rule)
}

// ObserveHTTP counts one request of route answered with code after d, in
// rankstream_http_requests_total and rankstream_http_request_seconds.
func ObserveHTTP(route, code string, d time.Duration) {
	httpRequests.WithLabelValues(route, code).Inc()
	httpSeconds.WithLabelValues(route, code).Observe(d.Seconds())
}

// HTTPRoute is ObserveHTTP of one route with the series of its 200s looked up once (on the
// first), instead of hashing the labels for every request of a busy read route.
type HTTPRoute struct {
	route string
	ok    func() (prometheus.Counter, prometheus.Observer)
}

// NewHTTPRoute returns the observer of route's requests.
func NewHTTPRoute(route string) *HTTPRoute {
	return &HTTPRoute{route: route, ok: sync.OnceValues(func() (prometheus.Counter, prometheus.Observer) {
		return httpRequests.WithLabelValues(route, "200"), httpSeconds.WithLabelValues(route, "200")
	})}
}

// Observe counts one request answered with code after d, as ObserveHTTP does.
func (r *HTTPRoute) Observe(code int, d time.Duration) {
	if code != http.StatusOK {
		ObserveHTTP(r.route, strconv.Itoa(code), d)
		return
	}
	n, s := r.ok()
	n.Inc()
	s.Observe(d.Seconds())
}

// RedisCall returns the latency observer and the error counter of one Redis call of client.
func RedisCall(client, call string) (prometheus.Observer, prometheus.Counter) {
	return redisCallSeconds.WithLabelValues(client, call), redisCallErrors.WithLabelValues(client, call)
}

// Metrics of the write gateway (rankstream gateway; its routes in rankstream dev). Its requests
// are also counted by ObserveHTTP.
var (
	GatewayRequests = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_gateway_requests_total", Help: "Write requests by API key name (\"-\" when no valid key was given) and status code.",
	}, []string{"key", "code"})
	GatewayRecords = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_gateway_records_total", Help: "Records the gateway handed to Kafka and Kafka acknowledged, by topic.",
	}, []string{"topic"})
	GatewayInFlightBytes = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "rankstream_gateway_in_flight_bytes", Help: "Bytes of records handed to the Kafka client and not yet acknowledged or failed (key, value and a fixed estimate of the client's bookkeeping per record); bounded by --max-in-flight-bytes.",
	})
	GatewayShed = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_gateway_shed_total", Help: "Write requests answered 503 with Retry-After, by reason: in_flight (the in-flight bytes were at their bound: Kafka is slow or down), kafka (Kafka did not acknowledge every record within the request deadline, or failed), kafka_down (shed at once while Kafka fails: only a few requests at a time probe it).",
	}, []string{"reason"})
	GatewayRateBuckets = promauto.NewGauge(prometheus.GaugeOpts{
		Name: "rankstream_gateway_rate_buckets", Help: "Per-user token buckets held in memory (bounded by --user-buckets).",
	})
	GatewayRateBucketsEvicted = promauto.NewCounter(prometheus.CounterOpts{
		Name: "rankstream_gateway_rate_buckets_evicted_total", Help: "Token buckets dropped to make room for another user while not yet full again: their users got a full burst back early. Buckets dropped once full are not counted (nothing is lost).",
	})
)
