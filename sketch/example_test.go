package sketch_test

import (
	"fmt"
	"time"

	"github.com/rankstream/rankstream/sketch"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// A window over the last minute, advancing every 10 seconds: events are
// added with their event time, the watermark closes the window, and TopK
// reports each item's count with its error bound.
func Example() {
	w, err := sketch.New(
		sketch.WithWindow(time.Minute),
		sketch.WithSlide(10*time.Second),
		sketch.WithK(2),
	)
	if err != nil {
		panic(err)
	}
	w.Advance(t0) // the window ends at the watermark
	for i, q := range []string{"go", "rust", "go", "zig", "go", "rust"} {
		w.Add(q, t0.Add(time.Duration(i)*time.Second)) // ahead of the watermark: pending
	}
	w.Advance(t0.Add(10 * time.Second)) // the events' slot enters the window
	start, end := w.Bounds()
	fmt.Println(start.Format("15:04:05"), "to", end.Format("15:04:05"))
	for _, it := range w.TopK() {
		fmt.Printf("%s count=%d error=%d\n", it.Item, it.Count, it.Error)
	}
	// Output:
	// 11:59:10 to 12:00:10
	// go count=3 error=0
	// rust count=2 error=0
}

// Events leave the window exactly when their slot does.
func Example_expiry() {
	w, _ := sketch.New(sketch.WithWindow(30*time.Second), sketch.WithSlide(10*time.Second))
	w.Advance(t0)
	w.Add("early", t0)
	w.Add("late", t0.Add(25*time.Second))
	for _, wm := range []time.Duration{30, 40, 50} {
		w.Advance(t0.Add(wm * time.Second))
		_, end := w.Bounds()
		fmt.Println(end.Format("15:04:05"), w.TopK())
	}
	// Output:
	// 12:00:30 [{early 1 0} {late 1 0}]
	// 12:00:40 [{late 1 0}]
	// 12:00:50 [{late 1 0}]
}

// Late events are dropped by default and counted in the statistics; with
// LateOldest they count in the oldest slot instead.
func Example_latePolicy() {
	for _, p := range []sketch.LatePolicy{sketch.LateDrop, sketch.LateOldest} {
		w, _ := sketch.New(sketch.WithWindow(time.Minute), sketch.WithSlide(10*time.Second), sketch.WithLatePolicy(p))
		w.Advance(t0)
		w.Add("old news", t0.Add(-2*time.Minute))
		fmt.Printf("%s: %v, dropped %d\n", p, w.TopK(), w.Stats().DroppedLate)
	}
	// Output:
	// drop: [], dropped 1
	// oldest: [{old news 1 0}], dropped 0
}

// Partitions keyed by item have disjoint Top-K lists; MergeTopK combines
// them into the global Top-K.
func ExampleMergeTopK() {
	p0 := []sketch.Item{{Item: "go", Count: 40}, {Item: "zig", Count: 7, Error: 2}}
	p1 := []sketch.Item{{Item: "rust", Count: 25, Error: 1}, {Item: "c", Count: 9}}
	for _, it := range sketch.MergeTopK(3, p0, p1) {
		fmt.Println(it.Item, it.Count, it.Error)
	}
	// Output:
	// go 40 0
	// rust 25 1
	// c 9 0
}

// A window's state is checkpointed with MarshalBinary and restored with
// UnmarshalBinary; the restored window continues exactly as the original.
func ExampleWindow_MarshalBinary() {
	w, _ := sketch.New(sketch.WithWindow(time.Minute), sketch.WithSlide(10*time.Second))
	w.Advance(t0)
	w.Add("checkpointed", t0)
	state, err := w.MarshalBinary()
	if err != nil {
		panic(err)
	}
	var restored sketch.Window
	if err := restored.UnmarshalBinary(state); err != nil {
		panic(err)
	}
	restored.Advance(t0.Add(10 * time.Second))
	fmt.Println(restored.TopK())
	// Output:
	// [{checkpointed 1 0}]
}

// Windows of the same shape merge; windows of different shapes do not.
func ExampleWindow_Merge() {
	a, _ := sketch.New(sketch.WithWindow(time.Minute), sketch.WithSlide(10*time.Second))
	b, _ := sketch.New(sketch.WithWindow(time.Minute), sketch.WithSlide(10*time.Second))
	a.Advance(t0)
	b.Advance(t0)
	a.Add("go", t0)
	b.Add("go", t0)
	b.Add("zig", t0)
	if err := a.Merge(b); err != nil {
		panic(err)
	}
	a.Advance(t0.Add(10 * time.Second))
	fmt.Println(a.TopK())
	c, _ := sketch.New(sketch.WithWidth(1024))
	fmt.Println(a.Merge(c) != nil)
	// Output:
	// [{go 2 0} {zig 1 0}]
	// true
}
