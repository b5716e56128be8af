// Package topics is the single source of truth for rankstream's Kafka topics: their names,
// partition counts and configurations, the event types that travel on them with their JSON
// codecs and validation rules, the dead-letter topic's header format, the formats of hot
// search's internal topics (HotPartial on hot.partials, HotLoopRecord on the hot group's loop
// topic, HotCheckpoint on hot.checkpoints: versioned binary codecs) and the Top-K snapshot that
// hot search publishes (TopKSnapshot, the JSON of hot:{stream}:latest).
//
// It imports goka only for its Stream, Table and Codec types; it must not import processors,
// sinks or anything that talks to Redis or ClickHouse.
package topics
