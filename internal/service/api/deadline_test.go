package api

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSharedDeadlines: the requests of one millisecond share a context whose deadline is the
// timeout after the end of that millisecond; it ends then, not sooner, with
// context.DeadlineExceeded; the next millisecond gets its own.
func TestSharedDeadlines(t *testing.T) {
	d := &deadlines{timeout: 30 * time.Millisecond}
	now := time.Now()
	ctx := d.at(now)
	if d.at(now.Truncate(time.Millisecond)) != ctx || d.at(now.Truncate(time.Millisecond).Add(time.Millisecond-1)) != ctx {
		t.Fatal("two requests of one millisecond got different contexts")
	}
	next := d.at(now.Truncate(time.Millisecond).Add(time.Millisecond))
	if next == ctx {
		t.Fatal("a request of the next millisecond got the previous one's context")
	}
	dl, ok := ctx.Deadline()
	if want := now.Truncate(time.Millisecond).Add(time.Millisecond + d.timeout); !ok || !dl.Equal(want) {
		t.Fatalf("deadline %v, %v; want %v", dl, ok, want)
	}
	if ctx.Err() != nil || ctx.Value("k") != nil {
		t.Fatalf("before its deadline: err %v, value %v", ctx.Err(), ctx.Value("k"))
	}
	<-ctx.Done()
	if time.Now().Before(dl) {
		t.Fatalf("ended at %v, before its deadline %v", time.Now(), dl)
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("after its deadline: err %v", ctx.Err())
	}
	<-next.Done()
	if !errors.Is(next.Err(), context.DeadlineExceeded) {
		t.Fatalf("the next millisecond's context: err %v", next.Err())
	}
}
