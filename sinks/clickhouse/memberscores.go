package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// MemberScoreRow is a member's score on one period of a board, a row of board_member_scores,
// identified by (Board, Period, Member). Its version is Version: the offset of the scores
// group's changelog record that held it (a member's records are in one partition, in the order
// its ops applied), so the member's latest state wins whatever order writes land in, and a
// record written again writes the same row.
type MemberScoreRow struct {
	Board string
	// Period is the period as in the board's Redis key, e.g. "d:20261130", "total".
	Period string
	Member string
	Score  int64
	// ReachedMs is when the member reached Score (the ts of the op that produced it), epoch
	// ms; reached_at is it to the second.
	ReachedMs int64
	// Scope is the member's scope board in the period besides the global one ("" none).
	Scope string
	// Deleted: the member left the board (a delete op); Score and ReachedMs are then 0.
	Deleted bool
	Version uint64
}

// WriteMemberScores inserts rows into board_member_scores in one batch; see WriteTopK.
func (s *Sink) WriteMemberScores(ctx context.Context, rows []MemberScoreRow) error {
	return write(ctx, s, &boardMemberScores, rows, CheckMemberScore, appendMemberScore)
}

// CheckMemberScore returns an error wrapping ErrInvalidRow for a row the table cannot take
// (a reach time after 2106, which a board allows but a DateTime does not hold).
func CheckMemberScore(r *MemberScoreRow) error {
	if r.Board == "" || r.Period == "" || r.Member == "" {
		return fmt.Errorf("%w: empty board, period or member", ErrInvalidRow)
	}
	return checkDateTime("reached_at", time.UnixMilli(r.ReachedMs))
}

func appendMemberScore(b driver.Batch, r *MemberScoreRow) error {
	var deleted uint8
	if r.Deleted {
		deleted = 1
	}
	return b.Append(r.Board, r.Period, r.Member, r.Score, time.UnixMilli(r.ReachedMs).UTC(), r.ReachedMs, r.Scope, deleted, r.Version)
}
