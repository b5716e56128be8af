// Package kafka turns one Kafka configuration into what the libraries need: goka processor
// options (sarama underneath), a franz-go client, and the creation and
// verification of rankstream's topics.
//
// It may import topics and the Kafka client libraries; it must not import processors or sinks.
package kafka
