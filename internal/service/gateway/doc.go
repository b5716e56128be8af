// Package gateway is the write service, one of rankstream's three services (the processors, the
// query API of internal/service/api, and this gateway): HTTP endpoints through which apps report events
// without speaking Kafka. Each route validates its body with the decoder the processor of its
// topic applies (package topics), rate-limits per user, and answers 202 only once Kafka
// acknowledged every record (franz-go, idempotent producer, acks=all, keyed and partitioned as
// the processors expect). It sheds load with 503 before its memory grows when Kafka is slow or
// down. API keys are kept as SHA-256 hashes only.
//
// It imports topics, board (the declared score boards), internal/platform/kafka and
// internal/platform/obs; never a processor, a sink or a store's driver.
package gateway
