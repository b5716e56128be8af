// Package kafka is rankstream's Kafka plumbing, one file per job: the configuration and
// goka's processor options over sarama (goka.go), the partitioner every producer shares
// (partition.go), goka's in-memory table storage (memstore.go), the process's one long-lived
// franz-go client with kadm over it (client.go) for topic set-up (admin.go), offsets, replay
// plans and clearing (offsets.go, replay.go) and range reads (reader.go), and the processors' start-up, lag metric
// and shutdown order (run.go), supervision (supervise.go) and dead letters (deadletter.go).
//
// It imports topics, internal/platform/obs, internal/platform/backoff and the Kafka client libraries; never a
// processor, a sink or a store's driver.
package kafka
