package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// TopKRow is one item of one Top-K snapshot, a row of topk_history, identified by
// (Stream, WindowEnd, Rank).
type TopKRow struct {
	// Stream names the Top-K stream, e.g. "search".
	Stream string
	// WindowStart and WindowEnd bound the snapshot's window. Both must be whole seconds:
	// window_end is part of the key and stored as a DateTime, so sub-second windows would
	// collide (a slide must be a whole number of seconds).
	WindowStart, WindowEnd time.Time
	// Rank is the item's place in the snapshot, 1 for the largest count.
	Rank uint32
	// Item is the reported item, e.g. a normalised search query.
	Item string
	// Count is the item's estimated count in the window; the true count lies in
	// [Count - Error, Count].
	Count, Error uint64
	// Version decides between different rows of one key: the highest wins. Every row of a
	// snapshot carries TopKVersion of the snapshot: the more complete it is (the fewer
	// partitions it misses) the higher, then the later it was generated the higher. So a
	// snapshot missing partitions never replaces a more complete one, a retry writes identical
	// rows, and a replay or recomputation of the same completeness wins over what was written
	// before. It must not be a function of the window alone: different rows with equal
	// versions make FINAL keep the last one inserted and argMax pick either.
	Version uint64
}

// The layout of TopKVersion: the low topkTimeBits bits hold the generation time in Unix
// milliseconds (until the year 2527), the high bits the snapshot's completeness, never 0.
const (
	topkTimeBits = 44
	// MaxTopKCompleteness is the largest completeness TopKVersion can encode, a complete
	// snapshot's: topics.TopKSnapshot.Completeness is MaxTopKCompleteness less the number of
	// partitions the snapshot misses.
	MaxTopKCompleteness = 1<<(64-topkTimeBits) - 1
	// TopKMissingSQL and TopKGeneratedAtSQL read back from a topk_history row's version the
	// number of partitions its snapshot missed (MaxTopKCompleteness less the completeness) and
	// its generation time in Unix milliseconds.
	TopKMissingSQL     = "(1048575 - intDiv(version, 17592186044416))"
	TopKGeneratedAtSQL = "(version % 17592186044416)"
)

// TopKVersion is the version of the rows of a snapshot of the given completeness
// (topics.TopKSnapshot.Completeness, the "more complete snapshot wins" rule's order) generated
// at generatedAt: completeness * 2^44 + generatedAt in Unix milliseconds. Rows written before
// missing partitions existed (version = generation time, high bits 0) rank below every
// snapshot it encodes.
func TopKVersion(completeness int64, generatedAt time.Time) (uint64, error) {
	ms := generatedAt.UnixMilli()
	switch {
	case completeness < 1 || completeness > MaxTopKCompleteness:
		return 0, fmt.Errorf("%w: completeness %d (%d missing partitions), want 1 to %d (0 to %d missing)", ErrInvalidRow,
			completeness, MaxTopKCompleteness-completeness, MaxTopKCompleteness, MaxTopKCompleteness-1)
	case ms < 0 || ms >= 1<<topkTimeBits:
		return 0, fmt.Errorf("%w: generation time %s outside 1970 to 2527", ErrInvalidRow, generatedAt.Format(time.RFC3339))
	}
	return uint64(completeness)<<topkTimeBits | uint64(ms), nil
}

// WriteTopK inserts rows into topk_history in one batch (pass thousands of rows per call, e.g.
// the snapshots of a flush interval). Rows written again replace themselves: see the package
// documentation. Invalid rows fail the whole call with ErrInvalidRow before anything is sent.
func (s *Sink) WriteTopK(ctx context.Context, rows []TopKRow) error {
	return write(ctx, s, &topkHistory, rows, checkTopK, appendTopK)
}

// Check returns the error WriteTopK would fail with for r (wrapping ErrInvalidRow), nil when it
// can be stored.
func (r *TopKRow) Check() error { return checkTopK(r) }

func checkTopK(r *TopKRow) error {
	switch {
	case r.Stream == "":
		return fmt.Errorf("%w: empty stream", ErrInvalidRow)
	case r.Rank == 0:
		return fmt.Errorf("%w: rank 0, want 1 or more", ErrInvalidRow)
	case r.WindowStart.Nanosecond() != 0 || r.WindowEnd.Nanosecond() != 0:
		return fmt.Errorf("%w: window [%s, %s) has a fraction of a second", ErrInvalidRow,
			r.WindowStart.Format(time.RFC3339Nano), r.WindowEnd.Format(time.RFC3339Nano))
	case !r.WindowEnd.After(r.WindowStart):
		return fmt.Errorf("%w: window end %s not after its start %s", ErrInvalidRow,
			r.WindowEnd.Format(time.RFC3339), r.WindowStart.Format(time.RFC3339))
	}
	if err := checkDateTime("window_start", r.WindowStart); err != nil {
		return err
	}
	return checkDateTime("window_end", r.WindowEnd)
}

func appendTopK(b driver.Batch, r *TopKRow) error {
	return b.Append(r.Stream, r.WindowStart, r.WindowEnd, r.Rank, r.Item, r.Count, r.Error, r.Version)
}
