// Package testenv hands out the servers that tests run against: a real Kafka
// broker or an in-process kfake cluster, a real Redis with a logical database
// of its own, and a real ClickHouse with a database of its own. It is the one
// place where tests find servers, so every package tests the same way.
//
// The real servers are started by deploy/local/servers.sh (make test does it)
// and announced through environment variables:
//
//	RANKSTREAM_TEST_KAFKA       127.0.0.1:PORT of the Kafka broker
//	RANKSTREAM_TEST_REDIS       127.0.0.1:PORT of redis-server
//	RANKSTREAM_TEST_CLICKHOUSE  127.0.0.1:PORT of clickhouse-server (native protocol)
//
// When a variable is missing the test is skipped, unless
// RANKSTREAM_REQUIRE_SERVERS=1 (set by make test), in which case it fails:
// a missing server never silently turns a test suite green. A server that is
// announced but does not answer always fails the test.
//
// Everything its functions create (kfake clusters, Redis databases, ClickHouse
// databases, clients) is released through t.Cleanup.
//
// Only tests may import this package (a test in this package checks it); it
// must not import any rankstream package.
package testenv
