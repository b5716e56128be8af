package sketch_test

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch"
)

// The benchmarks run our window and its peers (peers_bench_test.go) over the
// same generated streams: 2M events over one hour, so that the whole stream
// is one window and windowless peers answer the same question, of Zipf
// distributed items from a universe of 1M. Each reports ns/event (the loop's
// time per event: hash, window, sketch and heap for ours) and the
// precision and recall at 100 of its top 100 after one full pass, computed
// once per stream and engine outside the timed loop, and cpu-ns/event, the
// loop's thread CPU time per event (Linux), which other processes on a
// shared machine disturb less than wall time.

const benchK = 100

// benchEvent is one event of a benchmark stream. Items are laid out in
// stream order in one string, as fresh decoded messages would be.
type benchEvent struct {
	item string
	t    time.Time
	tick bool // the first event of a new slot: the watermark moves
}

type benchStream struct {
	name   string
	events []benchEvent
	truth  map[string]uint32
}

var benchStreams = sync.OnceValue(func() []*benchStream {
	var out []*benchStream
	nm := names(1_000_000)
	for i, skew := range []float64{0.8, 1.0, 1.2} {
		sc := scenario{skew: skew, items: 1_000_000, perHour: 2_000_000, length: time.Hour, seed: uint64(100 + i)}
		var arena []byte
		var offs []int
		var ts []time.Time
		sc.generate(func(e event) {
			offs = append(offs, len(arena))
			arena = append(arena, nm[e.id]...)
			ts = append(ts, e.t)
		})
		offs = append(offs, len(arena))
		all := string(arena)
		st := &benchStream{name: fmt.Sprintf("zipf%.1f", skew), truth: map[string]uint32{}}
		last := int64(-1)
		for j, t := range ts {
			item := all[offs[j]:offs[j+1]]
			slot := t.UnixNano() / int64(sketch.DefaultSlide)
			st.events = append(st.events, benchEvent{item: item, t: t, tick: slot != last})
			last = slot
			st.truth[item]++
		}
		out = append(out, st)
	}
	return out
})

// engine adapts a top-k implementation to the benchmark loop.
type engine interface {
	add(item string, t time.Time)
	tick(t time.Time)
	// top returns the engine's top 100 once the stream ended at t.
	top(end time.Time) []string
	reset()
	sizeBytes() int
}

// quality caches precision and recall at 100 per stream and engine.
var quality sync.Map // "stream/engine" → [2]float64

// benchEngine runs one engine over one stream: b.N events, starting the
// stream over (with a fresh engine, untimed) when it runs out.
func benchEngine(b *testing.B, st *benchStream, name string, mk func() engine) {
	e := mk()
	// The loop's thread CPU time, for comparisons on a shared machine.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, cpuOK := threadCPU()
	evs := st.events
	j := 0
	for range b.N {
		if j == len(evs) {
			b.StopTimer()
			e.reset()
			j = 0
			b.StartTimer()
		}
		ev := &evs[j]
		j++
		if ev.tick {
			e.tick(ev.t)
		}
		e.add(ev.item, ev.t)
	}
	cpu1, _ := threadCPU()
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
	if cpuOK {
		b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/event")
	}
	q, ok := quality.Load(st.name + "/" + name)
	if !ok {
		e := mk()
		for i := range evs {
			if evs[i].tick {
				e.tick(evs[i].t)
			}
			e.add(evs[i].item, evs[i].t)
		}
		p, r := precisionRecall(e.top(evs[len(evs)-1].t.Add(sketch.DefaultSlide)), st.truth, benchK)
		q = [3]float64{p, r, float64(e.sizeBytes())}
		quality.Store(st.name+"/"+name, q)
	}
	qq := q.([3]float64)
	b.ReportMetric(qq[0], "precision@100")
	b.ReportMetric(qq[1], "recall@100")
	b.ReportMetric(qq[2]/(1<<20), "MiB")
}

// precisionRecall scores a top-k list against exact counts, with the
// tie-aware definitions of accuracy_test.go.
func precisionRecall(top []string, truth map[string]uint32, k int) (prec, rec float64) {
	counts := make([]uint32, 0, len(truth))
	for _, c := range truth {
		counts = append(counts, c)
	}
	slices.SortFunc(counts, func(a, b uint32) int { return int(b) - int(a) })
	kth := counts[min(k, len(counts))-1]
	above := 0
	for _, c := range counts {
		if c > kth {
			above++
		}
	}
	strict, tied := 0, 0
	for _, it := range top[:min(k, len(top))] {
		switch c := truth[it]; {
		case c > kth:
			strict++
		case c == kth:
			tied++
		}
	}
	if len(top) == 0 {
		return 0, 0
	}
	prec = float64(strict+tied) / float64(min(k, len(top)))
	rec = float64(strict+min(tied, k-above)) / float64(k)
	return prec, rec
}

// ours is the Window with its defaults, K = 100.
type ours struct{ w *sketch.Window }

func newOurs() engine {
	w, err := sketch.New(sketch.WithK(benchK))
	if err != nil {
		panic(err)
	}
	return &ours{w: w}
}

func (o *ours) add(item string, t time.Time) { o.w.Add(item, t) }
func (o *ours) tick(t time.Time)             { o.w.Advance(t) }
func (o *ours) reset()                       { o.w.Reset() }
func (o *ours) sizeBytes() int               { return o.w.SizeBytes() }
func (o *ours) top(end time.Time) []string {
	o.w.Advance(end) // the watermark passes the last events
	var out []string
	for _, it := range o.w.TopK() {
		out = append(out, it.Item)
	}
	return out
}

// exactMap is the baseline: exact counts in a map (the streams fit in one
// window), sorted on demand. Its memory grows with the distinct items.
type exactMap struct{ m map[string]uint32 }

func newExactMap() engine { return &exactMap{m: map[string]uint32{}} }

func (e *exactMap) add(item string, _ time.Time) { e.m[item]++ }
func (e *exactMap) tick(time.Time)               {}
func (e *exactMap) reset()                       { clear(e.m) }
func (e *exactMap) sizeBytes() int               { return len(e.m) * (16 + 4 + 8 + 16) } // entry, string bytes, overhead
func (e *exactMap) top(time.Time) []string {
	items := make([]string, 0, len(e.m))
	for it := range e.m {
		items = append(items, it)
	}
	slices.SortFunc(items, func(a, b string) int {
		if e.m[a] != e.m[b] {
			return int(e.m[b]) - int(e.m[a])
		}
		return compareStrings(a, b)
	})
	return items[:min(benchK, len(items))]
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// BenchmarkTopK runs every engine over every stream; compare with
// benchstat -col /engine.
func BenchmarkTopK(b *testing.B) {
	engines := []struct {
		name string
		mk   func() engine
	}{
		{"rankstream", newOurs},
		{"exact-map", newExactMap},
	}
	engines = append(engines, peers()...)
	for _, st := range benchStreams() {
		for _, e := range engines {
			b.Run("stream="+st.name+"/engine="+e.name, func(b *testing.B) {
				benchEngine(b, st, e.name, e.mk)
			})
		}
	}
}

// BenchmarkWindowAdd is our full windowed path called directly, without the
// adapter's interface calls: hash, slot, sketch, candidates and heap, with
// the watermark moving every slot.
func BenchmarkWindowAdd(b *testing.B) {
	for _, st := range benchStreams() {
		b.Run("stream="+st.name, func(b *testing.B) {
			w, err := sketch.New(sketch.WithK(benchK))
			if err != nil {
				b.Fatal(err)
			}
			evs := st.events
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0, cpuOK := threadCPU()
			j := 0
			for range b.N {
				if j == len(evs) {
					b.StopTimer()
					w.Reset()
					j = 0
					b.StartTimer()
				}
				ev := &evs[j]
				j++
				if ev.tick {
					w.Advance(ev.t)
				}
				w.Add(ev.item, ev.t)
			}
			cpu1, _ := threadCPU()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/event")
			if cpuOK {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/event")
			}
		})
	}
}

// BenchmarkWindowTopK is a window's TopK at a window close, in the hot
// group's shape (1 h window, 5 s slide, 10 min lookahead, K 100, the default
// candidates), over one hour of the Zipf 1.0 stream: closing 2 s behind the
// newest event, as a partition keeping up does, and 8 min behind it, as one
// running ahead does (most of the lookahead then holds events).
func BenchmarkWindowTopK(b *testing.B) {
	st := benchStreams()[1]
	last := st.events[len(st.events)-1].t
	for _, behind := range []time.Duration{2 * time.Second, 8 * time.Minute} {
		b.Run("behind="+behind.String(), func(b *testing.B) {
			w, err := sketch.New(sketch.WithWindow(time.Hour), sketch.WithSlide(5*time.Second),
				sketch.WithLookahead(10*time.Minute), sketch.WithK(benchK))
			if err != nil {
				b.Fatal(err)
			}
			w.Advance(st.events[0].t)
			for _, ev := range st.events {
				w.Add(ev.item, ev.t)
			}
			w.Advance(last.Add(-behind))
			dst := w.AppendTopK(nil)
			if len(dst) != benchK {
				b.Fatalf("TopK holds %d items, want %d", len(dst), benchK)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				dst = w.AppendTopK(dst[:0])
			}
		})
	}
}
