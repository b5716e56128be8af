package history

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/rankstream/rankstream/topics"
)

// scripted is a Store whose writes fail with the errors it is given, in order, then succeed.
type scripted struct {
	errs  []error
	calls int
}

func (s *scripted) Check(*topics.TopKSnapshot) error { return nil }
func (s *scripted) Write(context.Context, []topics.TopKSnapshot) error {
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

// TestWriteRetriesOnlyRetryable: a retryable failure is retried until the write succeeds; any
// other failure is returned at once (the supervisor restarts the unit).
func TestWriteRetriesOnlyRetryable(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	snaps := []topics.TopKSnapshot{{}}
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
		s := &scripted{errs: tt.errs}
		err := write(context.Background(), s, snaps, log)
		if (err != nil) != tt.wantErr || s.calls != tt.wantCalls {
			t.Errorf("%s: write = %v after %d calls, want error %v after %d", tt.name, err, s.calls, tt.wantErr, tt.wantCalls)
		}
	}
	// Nothing to write: no call.
	s := &scripted{}
	if err := write(context.Background(), s, nil, log); err != nil || s.calls != 0 {
		t.Errorf("empty batch: %v after %d calls", err, s.calls)
	}
}
