// Package api is the read service, one of rankstream's three services (the processors, this
// query API, and the write gateway): the HTTP endpoints of /v1, which answer from Redis only,
// through the Reader of sinks/redis (the package that writes the same keys), never from Kafka;
// plus health and metrics endpoints. The one exception is the pages' time travel, GET
// /v1/history/hot (RegisterHistory, rankstream serve --history), which reads the history
// store through the HotHistory interface, never the live path.
//
// It imports sinks/redis, topics, board and internal/platform/obs; never goka, a Kafka client,
// a Redis or ClickHouse client, processors or another sink.
package api
