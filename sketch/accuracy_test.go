package sketch_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch"
	"github.com/rankstream/rankstream/sketch/exact"
)

// Precision and recall at k are defined so that ties at rank k do not
// count against the sketch. Let c_k be the k-th largest true count in the
// window, A the number of items whose true count exceeds c_k, and R the
// reported list (at most k items).
//
//   - precision@k = |{x ∈ R : true(x) ≥ c_k}| / |R|: a reported item is right
//     if it could be in some exact top k.
//   - recall@k = (|{x ∈ R : true(x) > c_k}| + min(|{x ∈ R : true(x) = c_k}|,
//     k − A)) / k: the share of the exact top k's places filled by items that
//     deserve them, tied items filling at most the places left by the items
//     strictly above c_k.
//
// The mean relative count error is the mean over R of |Count − true| / true.

// accuracy summarises a scenario's checkpoints.
type accuracy struct {
	name                 string
	checkpoints          int
	precMean, precMin    float64
	recMean, recMin      float64
	relErr               float64 // mean relative count error over all checkpoints
	violations           int     // reported items whose true count is outside their bounds
	underCounts          int     // exact top-k items whose sketch Count is below the truth
	sizeBytes, distincts int
	events               int
	elapsed              time.Duration
}

// measure runs a scenario through a window built with opts and checks it
// against the oracle every `every` of stream time once the first window is
// full.
func measure(tb testing.TB, sc scenario, k int, every time.Duration, opts ...sketch.Option) accuracy {
	tb.Helper()
	w, err := sketch.New(append([]sketch.Option{sketch.WithK(k)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	ids := sc.items + sc.trends + sc.bursts
	nm := names(ids)
	known := make(map[string]bool, ids)
	for _, n := range nm {
		known[n] = true
	}
	window, slide := sketch.DefaultWindow, sketch.DefaultSlide
	o, err := exact.New(window, slide)
	if err != nil {
		tb.Fatal(err)
	}
	res := accuracy{name: sc.name, precMin: 1, recMin: 1}
	seen := make([]bool, ids)
	next := streamStart.Add(window)
	var last int64 = math.MinInt64
	var relSum float64
	var relN int
	var top []sketch.Item
	began := time.Now()
	sc.generate(func(e event) {
		if s := e.t.UnixNano() / int64(slide); s != last {
			last = s
			w.Advance(e.t)
			o.Advance(e.t)
			if !e.t.Before(next) {
				next = next.Add(every)
				top = w.AppendTopK(top[:0])
				p, r, rel, bad, under := score(w, o, known, top, k)
				res.checkpoints++
				res.precMean += p
				res.recMean += r
				res.precMin = min(res.precMin, p)
				res.recMin = min(res.recMin, r)
				relSum += rel
				relN++
				res.violations += bad
				res.underCounts += under
			}
		}
		w.Add(nm[e.id], e.t)
		o.Add(nm[e.id], e.t)
		res.events++
		if !seen[e.id] {
			seen[e.id] = true
			res.distincts++
		}
	})
	res.elapsed = time.Since(began)
	if res.checkpoints > 0 {
		res.precMean /= float64(res.checkpoints)
		res.recMean /= float64(res.checkpoints)
		res.relErr = relSum / float64(relN)
	}
	res.sizeBytes = w.SizeBytes()
	return res
}

// score compares a reported top k with the oracle.
func score(w *sketch.Window, o *exact.Counter, known map[string]bool, top []sketch.Item, k int) (prec, rec, relErr float64, violations, underCounts int) {
	truth := o.Top(k)
	var kth uint64 // the k-th largest count
	if len(truth) > 0 {
		kth = truth[len(truth)-1].Count
	}
	above := 0 // items strictly above the k-th count
	for _, it := range truth {
		if it.Count > kth {
			above++
		}
		// Count-Min never under-counts, candidate or not.
		if got := w.Count(it.Item); got.Count < it.Count {
			underCounts++
		}
	}
	good, strict, tied := 0, 0, 0
	for _, it := range top {
		if !known[it.Item] {
			violations++
			continue
		}
		c := o.Count(it.Item)
		if c > it.Count || c < it.Count-it.Error {
			violations++
		}
		switch {
		case c > kth:
			strict++
			good++
		case c == kth && kth > 0:
			tied++
			good++
		}
		relErr += math.Abs(float64(it.Count)-float64(c)) / math.Max(float64(c), 1)
	}
	if len(top) == 0 {
		return 1, 1, 0, violations, underCounts
	}
	prec = float64(good) / float64(len(top))
	want := min(k, len(truth))
	rec = float64(strict+min(tied, want-above)) / float64(want)
	relErr /= float64(len(top))
	return prec, rec, relErr, violations, underCounts
}

// table formats results as a Markdown table.
func table(rs []accuracy) string {
	var b strings.Builder
	b.WriteString("| stream | events | distinct | checkpoints | precision@100 mean (min) | recall@100 mean (min) | mean rel. error top 100 | bound violations | memory/window | time |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.4f (%.2f) | %.4f (%.2f) | %.5f | %d | %.2f MiB | %v |\n",
			r.name, r.events, r.distincts, r.checkpoints, r.precMean, r.precMin, r.recMean, r.recMin,
			r.relErr, r.violations+r.underCounts, float64(r.sizeBytes)/(1<<20), r.elapsed.Round(time.Millisecond))
	}
	return b.String()
}

// TestAccuracySmoke is a small version of the accuracy report that runs with
// every test: the default window on a skewed stream and on one with trends
// and bursts must reach precision@100 and recall@100 of at least 0.99 within
// 4 MiB, with every reported bound holding.
func TestAccuracySmoke(t *testing.T) {
	const perHour = 1_000_000
	for _, sc := range []scenario{
		{name: "zipf 0.8", skew: 0.8, items: 200_000, perHour: perHour, length: 75 * time.Minute, seed: 11},
		{name: "zipf 1.0 + trends + bursts", skew: 1.0, items: 200_000, perHour: perHour, length: 75 * time.Minute, trends: 50, bursts: 50, seed: 12},
	} {
		r := measure(t, sc, 100, 5*time.Minute)
		t.Logf("%s: p@100 %.4f r@100 %.4f rel.err %.5f, %d bytes, %v", r.name, r.precMean, r.recMean, r.relErr, r.sizeBytes, r.elapsed)
		if r.checkpoints == 0 {
			t.Fatalf("%s: no checkpoint", r.name)
		}
		checkTargets(t, r)
	}
}

// checkTargets fails the test if a result misses the targets.
func checkTargets(t *testing.T, r accuracy) {
	t.Helper()
	if r.violations != 0 || r.underCounts != 0 {
		t.Errorf("%s: %d bound violations, %d under-counts; want none", r.name, r.violations, r.underCounts)
	}
	if r.precMean < 0.99 || r.recMean < 0.99 {
		t.Errorf("%s: precision@100 %.4f, recall@100 %.4f; want ≥ 0.99", r.name, r.precMean, r.recMean)
	}
	if r.sizeBytes > 4<<20 {
		t.Errorf("%s: %d bytes per window; want ≤ 4 MiB", r.name, r.sizeBytes)
	}
}

func mustNew(tb testing.TB, opts ...sketch.Option) *sketch.Window {
	tb.Helper()
	w, err := sketch.New(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}
