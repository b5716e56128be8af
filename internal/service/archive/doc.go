// Package archive is the unit `archive` of `rankstream process --history`: the Archiver
// copies the final board of every finished period from Redis to ClickHouse's board_archive,
// once, when the processors have stored their input up to the period's end plus a grace
// (ProcessedUntil).
//
// It reads the boards and keeps its marks through sinks/redis, writes through a Store
// (sinks/clickhouse's Sink) and reads the groups' offsets through internal/platform/kafka;
// it imports no processor and no other service.
package archive
