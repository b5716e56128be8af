package sketch_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"time"
)

// This file generates the streams of the accuracy tests and benchmarks; they
// are checked against the exact sliding-window counts of package
// sketch/exact.

// scenario describes a generated stream.
type scenario struct {
	name    string
	skew    float64       // Zipf exponent of the base items
	items   int           // distinct base items
	perHour int           // events per hour
	length  time.Duration // stream length
	trends  int           // items that rise and fall during the stream
	bursts  int           // items with short, intense bursts
	seed    uint64
}

// event is one generated occurrence: an item id and its time.
type event struct {
	id int32
	t  time.Time
}

// special is a trend or burst item: its share of all events at time t.
type special struct {
	id            int32
	peak          float64 // share at the peak
	from, to, mid time.Time
	burst         bool
}

func (s special) share(t time.Time) float64 {
	if t.Before(s.from) || !t.Before(s.to) {
		return 0
	}
	if s.burst {
		return s.peak
	}
	// A triangle: rising from `from` to `mid`, falling to `to`.
	if t.Before(s.mid) {
		return s.peak * float64(t.Sub(s.from)) / float64(s.mid.Sub(s.from))
	}
	return s.peak * float64(s.to.Sub(t)) / float64(s.to.Sub(s.mid))
}

// streamStart is the time of a generated stream's first event.
var streamStart = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)

// generate calls emit for every event of the scenario, in time order; ids
// below sc.items are base items by Zipf rank − 1.
func (sc scenario) generate(emit func(event)) {
	rng := rand.New(rand.NewPCG(sc.seed, 0x5eed))
	z := newZipf(rng, sc.skew, sc.items)
	// The share of the 100th base item, so that specials compete with it.
	var norm float64
	for k := 1; k <= sc.items; k++ {
		norm += 1 / math.Pow(float64(k), sc.skew)
	}
	p100 := 1 / math.Pow(100, sc.skew) / norm
	var specials []special
	for j := range sc.trends {
		mid := streamStart.Add(time.Duration(rng.Float64() * float64(sc.length)))
		half := time.Duration(10+rng.IntN(30)) * time.Minute
		specials = append(specials, special{
			id: int32(sc.items + j), peak: p100 * (0.5 + 4*rng.Float64()),
			from: mid.Add(-half), mid: mid, to: mid.Add(half),
		})
	}
	for j := range sc.bursts {
		from := streamStart.Add(time.Duration(rng.Float64() * float64(sc.length)))
		d := time.Duration(30+rng.IntN(270)) * time.Second
		// A burst holds 0.3 to 5 times the 100th item's hourly count.
		peak := p100 * float64(time.Hour) / float64(d) * (0.3 + 4.7*rng.Float64())
		specials = append(specials, special{
			id: int32(sc.items + sc.trends + j), peak: peak, from: from, to: from.Add(d), burst: true,
		})
	}
	total := int(float64(sc.perHour) * sc.length.Hours())
	dt := time.Hour / time.Duration(sc.perHour)
	var active []special
	var shares []float64
	var next time.Time // when to recompute the active specials
	for i := range total {
		t := streamStart.Add(time.Duration(i) * dt)
		if !t.Before(next) {
			next = t.Add(time.Second)
			active, shares = active[:0], shares[:0]
			for _, s := range specials {
				if sh := s.share(t); sh > 0 {
					active = append(active, s)
					shares = append(shares, sh)
				}
			}
		}
		id := int32(-1)
		u := rng.Float64()
		for j, sh := range shares {
			if u < sh {
				id = active[j].id
				break
			}
			u -= sh
		}
		if id < 0 {
			id = int32(z.next() - 1)
		}
		emit(event{id: id, t: t})
	}
}

// names maps ids to distinct item strings that do not follow rank order.
func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "q" + strconv.FormatUint(splitmix(uint64(i)), 36)
	}
	return out
}

// splitmix is the SplitMix64 finaliser, a bijection on uint64.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}
