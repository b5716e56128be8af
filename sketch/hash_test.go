package sketch_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch"
)

// TestHashGolden freezes Hash: encoded windows depend on it, so it must not
// change within an encoding version. The inputs cover every length branch.
func TestHashGolden(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
	}{
		{"", 0xbc98efd7661a7a1},
		{"a", 0x740640eb877718be},
		{"ab", 0xa07dd470dd48e98b},
		{"abc", 0xe3ceb03c39a692f8},
		{"abcd", 0x980b9c2b7e135f4},
		{"hello", 0x64837ad7f6f0b62b},
		{"weather today", 0x5072a261701f8629},
		{"0123456789abcdef", 0x551abcc05e20ec30},
		{"0123456789abcdefg", 0xfcb5b9e1dda15626},
		{strings.Repeat("x", 48), 0x3c237dc748f5c717},
		{strings.Repeat("y", 49), 0x684a326b84b3a1ee},
		{strings.Repeat("how to bake bread ", 7), 0x808d503b22a0b035},
	} {
		if got := sketch.Hash(tt.in); got != tt.want {
			t.Errorf("Hash(%q) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
}

// TestHashSpreads checks that similar keys spread evenly over the hash's
// high and low bytes (the sketch's columns and the table use both):
// chi-square over 256 buckets stays far below what a biased hash gives.
func TestHashSpreads(t *testing.T) {
	const n = 1 << 16
	for _, shift := range []uint{0, 24, 32, 56} {
		var buckets [256]int
		for i := range n {
			buckets[(sketch.Hash(fmt.Sprintf("q%d", i))>>shift)&255]++
		}
		var chi2 float64
		for _, c := range buckets {
			d := float64(c) - n/256
			chi2 += d * d / (n / 256)
		}
		// 255 degrees of freedom: mean 255, standard deviation about 22.6.
		if chi2 > 400 {
			t.Errorf("bits %d-%d: chi-square %.0f over 256 buckets", shift, shift+7, chi2)
		}
	}
}

// TestFarEventTimes checks event times outside the supported years: far
// ahead they are dropped as early; far behind they are late, dropped or
// counted into the oldest slot.
func TestFarEventTimes(t *testing.T) {
	past := time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)
	future := time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []sketch.LatePolicy{sketch.LateDrop, sketch.LateOldest} {
		w, _ := sketch.New(sketch.WithLatePolicy(p))
		w.Add("far", past) // before any start: nowhere to go
		w.Advance(t0)
		w.Add("far", future)
		w.Add("far", past)
		w.Advance(future) // clamped to the supported range: everything leaves
		st := w.Stats()
		wantLate := uint64(2)
		if p == sketch.LateOldest {
			wantLate = 1
		}
		if st.DroppedEarly != 1 || st.DroppedLate != wantLate {
			t.Errorf("%v: %+v", p, st)
		}
	}
	w, _ := sketch.New(sketch.WithLatePolicy(sketch.LateOldest))
	w.Advance(t0)
	w.Add("far", past)
	if got := w.Count("far"); got.Count != 1 || got.Error != 0 {
		t.Errorf("LateOldest: far past event counted %+v", got)
	}
}
