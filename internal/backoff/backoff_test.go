package backoff

import (
	"context"
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
