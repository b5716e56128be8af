package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
)

func TestIsRetryable(t *testing.T) {
	ctx := testContext(t)
	s, conn := migrated(t)

	// A port nobody listens on: the connection is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	_, refused := Open(ctx, closed, "rankstream")

	// A table that is gone: the server says UNKNOWN_TABLE.
	exec(t, conn, "DROP TABLE topk_history")
	unknownTable := s.WriteTopK(ctx, snapshot("search", windowEnd(0), 1, "a"))

	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"connection refused", refused, true},
		{"unknown table", unknownTable, false},
		{"invalid row", fmt.Errorf("flush: %w", ErrInvalidRow), false},
		{"cancelled", fmt.Errorf("flush: %w", context.Canceled), false},
		{"attempt timed out", fmt.Errorf("flush: %w", context.DeadlineExceeded), true},
		{"too many parts", fmt.Errorf("flush: %w", &clickhouse.Exception{Code: 252, Message: "Too many parts"}), true},
		{"syntax error", fmt.Errorf("flush: %w", &clickhouse.Exception{Code: 62, Message: "Syntax error"}), false},
		{"something else", errors.New("boom"), false},
	} {
		if got := IsRetryable(tc.err); got != tc.want {
			t.Errorf("%s: IsRetryable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
	if refused == nil || !strings.HasPrefix(refused.Error(), "clickhouse sink: ping "+closed) {
		t.Errorf("Open on a closed port = %v, want a ping error naming the address", refused)
	}
	if unknownTable == nil || !strings.HasPrefix(unknownTable.Error(), "clickhouse sink: topk_history: insert 1 rows: prepare: ") {
		t.Errorf("write to a dropped table = %v, want an error naming the table and the step", unknownTable)
	}
}
