// Package redis is rankstream's serving-store sink: it writes merged values and leaderboards
// into Redis (a single server or a Redis Cluster) through pipelines, idempotently, and reports
// back when a write is acknowledged so that Kafka offsets are committed only after it.
//
// It imports go-redis, internal/rank and internal/obs; never goka, Kafka or processors.
package redis
