// Package obs is rankstream's observability plumbing: the Prometheus metrics every service
// exports, the /metrics, /healthz and /readyz handlers, and the slog logger set-up.
//
// It imports only the standard library and the Prometheus client.
package obs

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Metrics of the pipeline. Labels are low-cardinality: topic, reason class, sink.
var (
	EventsIn = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_events_in_total", Help: "Records consumed by processors, by topic.",
	}, []string{"topic"})
	EventsOutcome = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_events_outcome_total", Help: "What valid records did to the state, by topic and outcome (steps: improved, duplicate, stale; scores: applied, duplicate; friends: refused).",
	}, []string{"topic", "outcome"})
	DeadLettered = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_dead_lettered_total", Help: "Records sent to the dead-letter topic, by source topic.",
	}, []string{"topic"})
	HotDropped = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_hot_dropped_total", Help: "Search queries the hot-search windows dropped, by reason: late (their window was already emitted), early (further ahead than the lookahead), full (a window held 2^32-1 events). A restart counts the drops of the loop records it re-reads again.",
	}, []string{"reason"})
	ConsumerLag = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rankstream_consumer_lag", Help: "Records behind the high-water mark, summed over the partitions this instance owns.",
	}, []string{"group"})
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
	HTTPRequests = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_http_requests_total", Help: "HTTP requests by route and status code.",
	}, []string{"route", "code"})
	QueryCache = promauto.NewCounterVec(prometheus.CounterOpts{
		Name: "rankstream_query_cache_requests_total", Help: "Requests of the query service's local caches, by cache and result: hit (answered without a Redis read of its own) or miss (read Redis).",
	}, []string{"cache", "result"})
	HTTPSeconds = promauto.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rankstream_http_request_seconds", Help: "HTTP request latency by route.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	}, []string{"route"})
)

// Metrics of the write gateway (rankstream gateway; its routes in rankstream dev). Its requests
// are also counted in HTTPRequests and HTTPSeconds by route.
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
