package sketch_test

import (
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch"
)

// TestZeroWindow checks that the zero Window works as one with the default
// options, whatever method comes first.
func TestZeroWindow(t *testing.T) {
	def, _ := sketch.New()
	first := map[string]func(w *sketch.Window){
		"Add":           func(w *sketch.Window) { w.Add("a", t0) },
		"AddHash":       func(w *sketch.Window) { w.AddHash(sketch.Hash("a"), "a", time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)) },
		"Advance":       func(w *sketch.Window) { w.Advance(t0) },
		"TopK":          func(w *sketch.Window) { _ = w.TopK() },
		"Count":         func(w *sketch.Window) { _ = w.Count("a") },
		"Stats":         func(w *sketch.Window) { _ = w.Stats() },
		"Bounds":        func(w *sketch.Window) { w.Bounds() },
		"SizeBytes":     func(w *sketch.Window) { _ = w.SizeBytes() },
		"Reset":         func(w *sketch.Window) { w.Reset() },
		"Clone":         func(w *sketch.Window) { _ = w.Clone() },
		"MarshalBinary": func(w *sketch.Window) { _, _ = w.MarshalBinary() },
		"Merge":         func(w *sketch.Window) { _ = w.Merge(def) },
		"Merged":        func(w *sketch.Window) { _ = def.Clone().Merge(w) },
	}
	for name, f := range first {
		t.Run(name, func(t *testing.T) {
			var w sketch.Window
			f(&w)
			w.Advance(t0)
			w.Add("x", t0)
			w.Advance(t0.Add(time.Minute))
			if got := w.Count("x"); got.Count != 1 || got.Error != 0 {
				t.Fatalf("Count(x) = %v", got)
			}
			if err := w.Merge(def); err != nil {
				t.Fatalf("zero window has another shape than the default: %v", err)
			}
		})
	}
}
