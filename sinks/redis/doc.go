// Package redis is rankstream's serving-store sink: it writes merged values and leaderboards
// into Redis (a single server or a Redis Cluster) through pipelines, idempotently, and reports
// back when a write is acknowledged so that Kafka offsets are committed only after it; and it
// publishes hot-search Top-K snapshots (HotWriter), which never go back in time.
//
// It imports go-redis, topics, internal/board and internal/obs; never goka, Kafka or processors.
package redis
