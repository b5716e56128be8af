package sketch

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// TestFullWindowDropsEvents checks the guard that keeps 32-bit counters from
// overflowing: a window holding 2^32 − 1 events drops further ones and
// counts them, and a merge that could exceed it fails and changes nothing.
func TestFullWindowDropsEvents(t *testing.T) {
	cfg := defaultConfig()
	cfg.resolve()
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	w := newWindow(cfg)
	w.Advance(t0)
	w.Add("a", t0)
	w.liveEvents = maxEvents // as if the blocks were full
	w.Add("b", t0)
	if w.stats.DroppedFull != 1 || w.Count("b").Count != 0 {
		t.Fatalf("full window took an event: %+v", w.stats)
	}
	other := newWindow(cfg)
	other.Advance(t0)
	other.Add("c", t0)
	before, _ := w.MarshalBinary()
	if err := w.Merge(other); !errors.Is(err, ErrOverflow) {
		t.Fatalf("Merge of full windows: %v", err)
	}
	if after, _ := w.MarshalBinary(); !bytes.Equal(before, after) {
		t.Fatal("failed merge changed the window")
	}
}
