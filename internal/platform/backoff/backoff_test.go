package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBaseDoublesUpToMax(t *testing.T) {
	b := New(time.Millisecond, 5*time.Millisecond)
	var got []time.Duration
	for range 5 {
		got = append(got, b.Base())
		if !b.Wait(context.Background()) {
			t.Fatal("Wait = false with a live context")
		}
	}
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 5 * time.Millisecond, 5 * time.Millisecond}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("bases = %v, want %v", got, want)
		}
	}
}

func TestWaitsAtLeastItsBase(t *testing.T) {
	b := New(20*time.Millisecond, time.Second)
	start := time.Now()
	b.Wait(context.Background())
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("waited %s, want at least 20ms", d)
	}
}

func TestWaitEndsWithItsContext(t *testing.T) {
	b := New(time.Hour, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if b.Wait(ctx) {
		t.Fatal("Wait = true with an ended context")
	}
	if b.Base() != time.Hour {
		t.Errorf("base after the cut wait = %s, want %s (max)", b.Base(), time.Hour)
	}
}

func TestMaxBelowFirst(t *testing.T) {
	if b := New(50*time.Millisecond, 10*time.Millisecond); b.Base() != 10*time.Millisecond {
		t.Errorf("first base = %s, want the max, 10ms", b.Base())
	}
}

func TestRetryUntilSuccess(t *testing.T) {
	var attempts []int
	calls := 0
	err := Retry(context.Background(), New(time.Microsecond, time.Microsecond), nil,
		func(attempt int, err error, _ time.Duration) { attempts = append(attempts, attempt) },
		func() error {
			if calls++; calls < 4 {
				return errors.New("down")
			}
			return nil
		})
	if err != nil || calls != 4 || len(attempts) != 3 || attempts[2] != 3 {
		t.Fatalf("err %v after %d calls, notified %v; want nil after 4 calls, notified [1 2 3]", err, calls, attempts)
	}
}

func TestRetryStopsAtAPermanentError(t *testing.T) {
	permanent := errors.New("invalid")
	calls := 0
	err := Retry(context.Background(), New(time.Microsecond, time.Microsecond),
		func(err error) bool { return !errors.Is(err, permanent) },
		func(int, error, time.Duration) { t.Fatal("notified of a permanent error") },
		func() error { calls++; return permanent })
	if err != permanent || calls != 1 {
		t.Fatalf("err %v after %d calls; want the permanent error after 1", err, calls)
	}
}

func TestRetryEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	down := errors.New("down")
	err := Retry(ctx, New(time.Hour, time.Hour), nil, func(int, error, time.Duration) { cancel() },
		func() error { return down })
	if !errors.Is(err, context.Canceled) || !errors.Is(err, down) {
		t.Fatalf("err = %v; want it to wrap context.Canceled and the last error", err)
	}
}

func TestResetStartsOver(t *testing.T) {
	b := New(time.Millisecond, time.Hour)
	b.Wait(context.Background())
	b.Wait(context.Background())
	b.Reset()
	if b.Base() != time.Millisecond {
		t.Fatalf("base after Reset = %s, want 1ms", b.Base())
	}
}
