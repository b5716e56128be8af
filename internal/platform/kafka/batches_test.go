package kafka

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// scripted is a Batch whose writes fail with the errors it is given, in order, then succeed.
type scripted struct {
	n     int
	errs  []error
	calls int
}

func (s *scripted) Add(*kgo.Record) error { s.n++; return nil }
func (s *scripted) Len() int              { return s.n }
func (s *scripted) Reset()                { s.n = 0 }
func (s *scripted) Write(context.Context) error {
	s.calls++
	if len(s.errs) == 0 {
		return nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return err
}
func (s *scripted) Retryable(err error) bool { return errors.Is(err, errDown) }

var errDown = errors.New("store down")

// TestBatchWriteRetriesOnlyRetryable: a retryable failure is retried until the write
// succeeds; any other failure is returned at once (the supervisor restarts the unit).
func TestBatchWriteRetriesOnlyRetryable(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tt := range []struct {
		name      string
		errs      []error
		wantCalls int
		wantErr   bool
	}{
		{"succeeds", nil, 1, false},
		{"down three times", []error{errDown, errDown, errDown}, 4, false},
		{"not retryable", []error{errDown, errors.New("table missing")}, 2, true},
	} {
		s := &scripted{n: 1, errs: tt.errs}
		err := BatchConsumer{Group: "g", Batch: s}.write(context.Background(), log)
		if (err != nil) != tt.wantErr || s.calls != tt.wantCalls {
			t.Errorf("%s: write = %v after %d calls, want error %v after %d", tt.name, err, s.calls, tt.wantErr, tt.wantCalls)
		}
	}
	// Nothing to write: no call.
	s := &scripted{}
	if err := (BatchConsumer{Group: "g", Batch: s}).write(context.Background(), log); err != nil || s.calls != 0 {
		t.Errorf("empty batch: %v after %d calls", err, s.calls)
	}
}
