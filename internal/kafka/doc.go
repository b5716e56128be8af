// Package kafka is rankstream's Kafka plumbing, split by job: the configuration of one
// deployment (Config) and what the libraries need from it (goka processor options over sarama,
// the partitioner every client shares, the in-memory table storage; franz-go clients); the
// creation and verification of the topics (admin.go); offsets, clearing and range reads
// (offsets.go); and what every goka processor shares: its start-up, lag metric and shutdown
// order (Run), dead-lettering of bad records (DeadLetter) and the restarts of a failed unit
// (Supervisor).
//
// It imports topics, internal/obs, internal/backoff and the Kafka client libraries; never a
// processor, a sink or a store's driver.
package kafka
