// Package reconcile is `rankstream reconcile`: it compares what Redis holds (the daily steps
// of a day, or one period of a score board) with the group table the processors keep in
// Kafka, reports the differences by class (Missing, Stale, Extra, WrongOrder) and, with
// Repair, rewrites what differs through the sinks' own writers and compares again.
//
// It reads the tables through internal/platform/kafka, decodes them with the processors'
// state codecs (processors/steps, processors/scores) and reads and repairs Redis through
// sinks/redis; it imports no other service, and never ClickHouse.
package reconcile
