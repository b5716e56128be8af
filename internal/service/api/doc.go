// Package api is the read service, one of rankstream's three services (the processors, this
// query API, and the write gateway): HTTP endpoints that answer from Redis only, through the
// Reader of sinks/redis (the package that writes the same keys), never from Kafka or
// ClickHouse; plus health and metrics endpoints.
//
// It imports sinks/redis, topics, board and internal/platform/obs; never goka, a Kafka client,
// a Redis client, processors or another sink.
package api
