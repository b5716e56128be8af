// Package clickhouse is rankstream's history sink: it creates the ClickHouse schema of the
// contract (topk_history, user_daily_steps, board_archive, board_member_scores) and writes rows into it through the
// native batch API, idempotently, for analysts to query. It also holds the analysts' queries
// that docs/contract.md shows.
//
// The schema and the queries work on Debian's clickhouse-server 18.16 and on current servers:
// DateTime('UTC') instead of DateTime64, no Map or LowCardinality, TTL only where
// SELECT version() says the server has it, client-side `?` binding instead of server-side
// parameters, and every INSERT through PrepareBatch with its columns named.
//
// # Idempotence
//
// Every table is a ReplacingMergeTree whose sorting key is the row's identity, partitioned by
// a function of that key (so that all versions of a row meet in one partition). Writing a row
// again, whether from a retried batch, a replay or a second instance, never adds a visible
// row: under SELECT ... FINAL, or with argMax(column, version) grouped by the key, each key
// shows once, with the values of its highest version. Identical rows collapse whatever their
// version; the version only decides between rows that differ:
//
//   - topk_history, key (stream, window_end, rank): the version is TopKVersion of the
//     snapshot, the same for every row of one snapshot: the fewer partitions the snapshot
//     missed the higher, then the later it was generated the higher. A snapshot missing
//     partitions (published when the merge's wait ran out) never replaces a more complete
//     one of its window, whatever the order in which they land; a retry writes the same rows
//     again; a replay or a later recomputation of a window as complete wins over what was
//     written before. A recomputation replaces a window rank by rank: if it has fewer ranks
//     than the earlier one, the earlier one's extra ranks stay (drop the month's partition
//     before a replay that changes K). A more complete snapshot of a window never has fewer
//     ranks than a less complete one (the partitions' lists are disjoint).
//   - user_daily_steps, key (user_id, day): the version is DailyStepsVersion, the steps then
//     the earlier reach time. A day's merged steps only grow (and a value's reach time only
//     moves earlier), so the largest value wins in whatever order the writes land.
//   - board_archive, key (board, period, rank): the version is archived_at, so a later archive
//     of a period replaces an earlier one. Its key holds no date, so it has one partition.
//   - board_member_scores, key (board, period, member): the version is the offset of the
//     scores table's changelog record the row came from (a member's records are in one
//     partition, in the order its ops applied), so the member's latest state wins. One
//     partition, like board_archive.
//
// topk_history is partitioned by month of window_end; on servers with TTL (19.6 and later)
// its rows expire after a retention set at creation (WithTopKRetention).
//
// # Migrations
//
// Migrate runs idempotent DDL only (CREATE ... IF NOT EXISTS, generated from one description
// of each table) and then checks the columns of the tables it finds, so that a table created
// by hand with other columns fails early. There is no migrations table: a future schema
// change adds another idempotent statement.
//
// The rules of the rows live here too (DailyStepsRowOf, ArchivePeriod, the Check functions):
// what a value must be to become a row and how it maps onto the columns. The adapters from a
// processor's types to these rows stay in internal/service/app, since a sink imports no
// processor.
//
// It imports clickhouse-go, board and internal/platform/obs; never goka, Kafka or the
// processors.
// It imports clickhouse-go and internal plumbing; never Kafka, goka, a processor or Redis.
package clickhouse
