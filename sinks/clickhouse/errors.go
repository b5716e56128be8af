package clickhouse

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// ErrInvalidRow means that a row cannot be stored as it is (e.g. a window bound with a
// fraction of a second); nothing of its batch was written. Retrying does not help.
var ErrInvalidRow = errors.New("clickhouse sink: invalid row")

// retryableCodes are ClickHouse exception codes of conditions that pass: overload, timeouts,
// network trouble between servers, replicas or Keeper away.
var retryableCodes = map[int32]bool{
	3:   true, // UNEXPECTED_END_OF_FILE
	159: true, // TIMEOUT_EXCEEDED
	202: true, // TOO_MANY_SIMULTANEOUS_QUERIES
	203: true, // NO_FREE_CONNECTION
	209: true, // SOCKET_TIMEOUT
	210: true, // NETWORK_ERROR
	236: true, // ABORTED
	241: true, // MEMORY_LIMIT_EXCEEDED
	242: true, // TABLE_IS_READ_ONLY
	252: true, // TOO_MANY_PARTS
	285: true, // TOO_FEW_LIVE_REPLICAS
	319: true, // UNKNOWN_STATUS_OF_INSERT
	425: true, // SYSTEM_ERROR
	439: true, // CANNOT_SCHEDULE_TASK
	999: true, // KEEPER_EXCEPTION
}

// IsRetryable reports whether a failed write may succeed if tried again later with the same
// rows: connection and network errors, a timed-out attempt (context.DeadlineExceeded), and
// server errors of passing conditions (too many parts, memory limit, timeouts, ...). It is
// false for ErrInvalidRow, context.Canceled, schema and syntax errors: retrying those only
// repeats them. Writes are idempotent, so retrying a batch that was in fact written is safe.
func IsRetryable(err error) bool {
	var ex *clickhouse.Exception
	var netErr net.Error
	switch {
	case err == nil, errors.Is(err, ErrInvalidRow), errors.Is(err, context.Canceled):
		return false
	case errors.As(err, &ex):
		return retryableCodes[ex.Code]
	case errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE),
		errors.Is(err, clickhouse.ErrAcquireConnTimeout),
		errors.As(err, &netErr):
		return true
	}
	return false
}
