package app

import (
	"context"

	"github.com/rankstream/rankstream/processors/scores"
	rsclickhouse "github.com/rankstream/rankstream/sinks/clickhouse"
)

// MemberScores writes the scores group's member totals to ClickHouse's board_member_scores
// (scores.TotalsStore).
type MemberScores struct{ Sink *rsclickhouse.Sink }

// CheckTotal returns an error wrapping rsclickhouse.ErrInvalidRow for a row the table cannot
// take.
func (MemberScores) CheckTotal(t *scores.Total) error {
	r := memberScoreRow(t)
	return rsclickhouse.CheckMemberScore(&r)
}

// WriteTotals inserts rows in one batch.
func (m MemberScores) WriteTotals(ctx context.Context, rows []scores.Total) error {
	out := make([]rsclickhouse.MemberScoreRow, len(rows))
	for i := range rows {
		out[i] = memberScoreRow(&rows[i])
	}
	return m.Sink.WriteMemberScores(ctx, out)
}

// Retryable tells whether a failed write may succeed later (rsclickhouse.IsRetryable).
func (MemberScores) Retryable(err error) bool { return rsclickhouse.IsRetryable(err) }

func memberScoreRow(t *scores.Total) rsclickhouse.MemberScoreRow {
	return rsclickhouse.MemberScoreRow{Board: t.Board, Period: t.Period, Member: t.Member, Score: t.Score,
		ReachedMs: t.ReachedMs, Scope: t.Scope, Deleted: t.Deleted, Version: t.Version}
}
