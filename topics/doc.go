// Package topics is the Kafka contract of rankstream, its single source of truth: the topics'
// names, partition counts and configurations, the processor groups' names (which name their
// loop and table topics), every format that travels on a topic (the input events with their
// JSON codecs and validation rules; the internal topics hot.partials, the hot loop topic,
// hot.checkpoints and hot.history; the dead-letter topic's headers), and the Top-K snapshot
// that hot search publishes (TopKSnapshot). No library struct goes on a topic as it is: every
// format has explicit JSON tags or a versioned binary codec here. A group table's value is
// owned by its processor family, with its pure state (as steps' State).
//
// It imports sketch, board, and goka only for its Stream, Table and Codec types; it
// must not import processors, sinks, a Kafka client or anything that talks to Redis or
// ClickHouse.
package topics
