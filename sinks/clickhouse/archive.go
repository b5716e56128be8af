package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/rankstream/rankstream/board"
)

// BoardArchiveRow is one member of a board at the end of a period, a row of board_archive,
// identified by (Board, Period, Rank). Its version is ArchivedAt: a later archive of the same
// period replaces an earlier one.
type BoardArchiveRow struct {
	// Board is the board's name, e.g. "game".
	Board string
	// Period is the period as in the board's Redis key, e.g. "d:20261130" or "season:s3".
	Period string
	// Rank is the member's place, 1 for the highest score.
	Rank   uint32
	Member string
	Score  int64
	// ArchivedAt is when the archive was taken, stored to the second; every row of one
	// archive carries the same value.
	ArchivedAt time.Time
}

// ArchivePeriod is the Period of the rows of one board of a period: the period and its id
// ("d:20261130", "season:s3"), and for a scope board ":s:<scope>" after them, as in the
// board's Redis key (a steps region is its scope).
func ArchivePeriod(p board.Period, id, scope string) string {
	period := string(p) + ":" + id
	if scope == "" {
		return period
	}
	return period + ":s:" + scope
}

// WriteBoardArchive inserts rows into board_archive in one batch; see WriteTopK.
func (s *Sink) WriteBoardArchive(ctx context.Context, rows []BoardArchiveRow) error {
	return write(ctx, s, &boardArchive, rows, checkBoardArchive, appendBoardArchive)
}

func checkBoardArchive(r *BoardArchiveRow) error {
	switch {
	case r.Board == "" || r.Period == "":
		return fmt.Errorf("%w: empty board or period", ErrInvalidRow)
	case r.Rank == 0:
		return fmt.Errorf("%w: rank 0, want 1 or more", ErrInvalidRow)
	}
	return checkDateTime("archived_at", r.ArchivedAt)
}

func appendBoardArchive(b driver.Batch, r *BoardArchiveRow) error {
	return b.Append(r.Board, r.Period, r.Rank, r.Member, r.Score, r.ArchivedAt)
}
