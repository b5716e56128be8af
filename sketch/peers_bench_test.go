package sketch_test

// The peers of the benchmarks. They are imported only here, in a _test.go
// file of the external test package, so they stay out of the production
// dependency graph: `go list -deps ./cmd/...` does not list them.

import (
	"math"
	"time"

	"github.com/apache/datasketches-go/common"
	"github.com/apache/datasketches-go/frequencies"
	keiler "github.com/keilerkonzept/topk"
	"github.com/keilerkonzept/topk/sliding"
	segment "github.com/segmentio/topk"

	"github.com/rankstream/rankstream/sketch"
)

// The peers are sized to about our default window's memory (3.4 MiB) where
// their options allow it.
const (
	// keilerkonzept/topk: 8-byte buckets, depth 4 → 4 × 110000 × 8 B.
	keilerWidth = 110_000
	// keilerkonzept/topk/sliding: buckets with 12 aged counters (88 B;
	// like our 12 blocks), depth 4 → 4 × 10000 × 88 B.
	slidingWidth, slidingHistory = 10_000, 12
	// datasketches frequencies: a map of 2^17 slots of 26 B.
	datasketchesMapSize = 1 << 17
	// segmentio/topk's width (k·ln k) and depth (ln k) follow from k: at
	// k = 100 it holds 15 KB; k = 6000 gives our memory (3.3 MiB).
	segmentioEqualK = 6000
)

func peers() []struct {
	name string
	mk   func() engine
} {
	return []struct {
		name string
		mk   func() engine
	}{
		{"segmentio-heavykeeper", func() engine { return &segmentioHK{hk: segment.New(benchK, 0.9), k: benchK} }},
		{"segmentio-heavykeeper-k6000", func() engine {
			return &segmentioHK{hk: segment.New(segmentioEqualK, 0.9), k: segmentioEqualK}
		}},
		{"keilerkonzept-topk", func() engine {
			return &keilerTopK{s: keiler.New(benchK, keiler.WithWidth(keilerWidth), keiler.WithDepth(4))}
		}},
		{"keilerkonzept-sliding", func() engine { return &keilerSliding{s: newSliding()} }},
		{"datasketches-frequencies", newDatasketches},
	}
}

type segmentioHK struct {
	hk *segment.HeavyKeeper
	k  int
}

func (s *segmentioHK) add(item string, _ time.Time) { s.hk.Sample(item, 1) }
func (s *segmentioHK) tick(time.Time)               {}
func (s *segmentioHK) reset()                       { s.hk.Reset() }
func (s *segmentioHK) sizeBytes() int {
	// The buckets (8 B each) and the heap (24 B per entry), as New sizes them.
	width, depth := max(256, int(float64(s.k)*ln(s.k))), max(3, int(ln(s.k)))
	return width*depth*8 + s.k*24
}
func (s *segmentioHK) top(time.Time) []string {
	var out []string
	for _, fc := range s.hk.Top() {
		if len(out) == benchK {
			break
		}
		out = append(out, fc.Flow)
	}
	return out
}

type keilerTopK struct{ s *keiler.Sketch }

func (k *keilerTopK) add(item string, _ time.Time) { k.s.Incr(item) }
func (k *keilerTopK) tick(time.Time)               {}
func (k *keilerTopK) reset()                       { k.s.Reset() }
func (k *keilerTopK) sizeBytes() int               { return k.s.SizeBytes() }
func (k *keilerTopK) top(time.Time) []string {
	var out []string
	for _, it := range k.s.SortedSlice() {
		out = append(out, it.Item)
	}
	return out
}

type keilerSliding struct{ s *sliding.Sketch }

func newSliding() *sliding.Sketch {
	slots := int(sketch.DefaultWindow / sketch.DefaultSlide)
	return sliding.New(benchK, slots, sliding.WithWidth(slidingWidth),
		sliding.WithDepth(4), sliding.WithBucketHistoryLength(slidingHistory))
}

func (k *keilerSliding) add(item string, _ time.Time) { k.s.Incr(item) }
func (k *keilerSliding) tick(time.Time)               { k.s.Tick() }

// reset builds a new sketch: v1.1.4's Reset clears the buckets' history
// slices along with them, and the next Add panics (index out of range).
func (k *keilerSliding) reset()         { k.s = newSliding() }
func (k *keilerSliding) sizeBytes() int { return k.s.SizeBytes() }
func (k *keilerSliding) top(time.Time) []string {
	var out []string
	for _, it := range k.s.SortedSlice() {
		out = append(out, it.Item)
	}
	return out
}

type datasketches struct {
	s *frequencies.ItemsSketch[string]
}

func newDatasketches() engine {
	s, err := frequencies.NewFrequencyItemsSketchWithMaxMapSize[string](datasketchesMapSize,
		common.ItemSketchStringHasher{}, common.ItemSketchStringSerDe{})
	if err != nil {
		panic(err)
	}
	return &datasketches{s: s}
}

func (d *datasketches) add(item string, _ time.Time) {
	if err := d.s.Update(item); err != nil {
		panic(err)
	}
}
func (d *datasketches) tick(time.Time) {}
func (d *datasketches) reset() {
	if err := d.s.Reset(); err != nil {
		panic(err)
	}
}

// sizeBytes counts the map's slots: a string header, an int64 and an int16.
func (d *datasketches) sizeBytes() int { return datasketchesMapSize * (16 + 8 + 2) }
func (d *datasketches) top(time.Time) []string {
	rows, err := d.s.GetFrequentItems(frequencies.ErrorTypeEnum.NoFalseNegatives)
	if err != nil {
		panic(err)
	}
	var out []string
	for _, r := range rows {
		if len(out) == benchK {
			break
		}
		out = append(out, r.GetItem())
	}
	return out
}

func ln(k int) float64 { return math.Log(float64(k)) }
