// Package scores is the processor family of score boards: the goka group "scores"
// (processor.go), which keeps each member's state on every declared board in its table
// (restored from its changelog after a crash or rebalance) and hands the entries every op
// leaves to a Sink, which commits the record once they are stored; and the member state with
// its pure rules (state.go: set, incr and delete per board and period, idempotent on request
// ids, with a versioned binary codec for the group table); and the consumer group
// scores-totals (totals.go), which writes every member's entries from the table's changelog
// to a TotalsStore (ClickHouse's board_member_scores).
//
// It imports topics and internal plumbing (board, kafka, obs); never a sink, a Redis client
// or another processor family.
package scores
