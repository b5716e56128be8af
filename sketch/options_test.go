package sketch_test

import (
	"errors"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch"
)

func TestNewValidatesOptions(t *testing.T) {
	tests := []struct {
		name string
		opts []sketch.Option
		ok   bool
	}{
		{"defaults", nil, true},
		{"short window gets fewer blocks", []sketch.Option{sketch.WithWindow(20 * time.Second), sketch.WithSlide(10 * time.Second)}, true},
		{"odd slide gets a rounded lookahead", []sketch.Option{sketch.WithWindow(70 * time.Second), sketch.WithSlide(7 * time.Second)}, true},
		{"width too small", []sketch.Option{sketch.WithWidth(8)}, false},
		{"width too large", []sketch.Option{sketch.WithWidth(1 << 25)}, false},
		{"depth 0", []sketch.Option{sketch.WithDepth(0)}, false},
		{"depth 17", []sketch.Option{sketch.WithDepth(17)}, false},
		{"k 0", []sketch.Option{sketch.WithK(0)}, false},
		{"candidates below k", []sketch.Option{sketch.WithK(100), sketch.WithCandidates(99)}, false},
		{"slide 0", []sketch.Option{sketch.WithSlide(0)}, false},
		{"window not a multiple of the slide", []sketch.Option{sketch.WithWindow(7 * time.Second), sketch.WithSlide(5 * time.Second)}, false},
		{"window below the slide", []sketch.Option{sketch.WithWindow(time.Second), sketch.WithSlide(5 * time.Second)}, false},
		{"too many slots", []sketch.Option{sketch.WithSlide(time.Millisecond), sketch.WithWindow(time.Hour)}, false},
		{"lookahead 0", []sketch.Option{sketch.WithLookahead(0)}, false},
		{"lookahead not a multiple", []sketch.Option{sketch.WithLookahead(7 * time.Second)}, false},
		{"blocks 0", []sketch.Option{sketch.WithBlocks(0)}, false},
		{"more blocks than slots", []sketch.Option{sketch.WithBlocks(721)}, false},
		{"one block per slot", []sketch.Option{sketch.WithBlocks(720), sketch.WithWidth(1024)}, true},
		{"late policy unknown", []sketch.Option{sketch.WithLatePolicy(7)}, false},
		{"memory above the limit", []sketch.Option{sketch.WithWidth(1 << 22), sketch.WithDepth(16)}, false},
		{"window over a century", []sketch.Option{sketch.WithWindow(200 * 365 * 24 * time.Hour), sketch.WithSlide(24 * time.Hour)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := sketch.New(tt.opts...)
			if tt.ok {
				if err != nil || w == nil {
					t.Fatalf("New: %v", err)
				}
				if w.K() < 1 || w.String() == "" {
					t.Fatalf("K %d, String %q", w.K(), w)
				}
				return
			}
			if !errors.Is(err, sketch.ErrInvalidOption) || w != nil {
				t.Fatalf("New = %v, %v; want an error wrapping ErrInvalidOption", w, err)
			}
		})
	}
}

func TestMergeShapeMismatch(t *testing.T) {
	a, _ := sketch.New()
	b, _ := sketch.New(sketch.WithK(10))
	if err := a.Merge(b); !errors.Is(err, sketch.ErrShapeMismatch) {
		t.Fatalf("Merge of different shapes: %v", err)
	}
	if err := a.Merge(nil); err != nil {
		t.Fatalf("Merge(nil): %v", err)
	}
}
