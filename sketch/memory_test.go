package sketch_test

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/rankstream/rankstream/sketch"
)

// TestMemoryFlat checks that a window's memory does not depend on the
// number of distinct items: SizeBytes and the live Go heap after a garbage
// collection are the same after 10k and after 10M distinct items (1M under
// the race detector, to stay fast), spread over more than a window so that
// it also slides. Items all have the same length, so that the candidates'
// strings weigh the same.
func TestMemoryFlat(t *testing.T) {
	most := 10_000_000
	if raceEnabled {
		most = 1_000_000
	}
	type footprint struct{ size, heap int64 }
	measure := func(distinct int) footprint {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w, err := sketch.New()
		if err != nil {
			t.Fatal(err)
		}
		span := sketch.DefaultWindow + 10*time.Minute
		step := span / time.Duration(distinct)
		buf := make([]byte, 0, 16)
		last := time.Time{}
		for i := range distinct {
			ts := streamStart.Add(time.Duration(i) * step)
			if ts.Sub(last) >= sketch.DefaultSlide {
				w.Advance(ts)
				last = ts
			}
			buf = strconv.AppendInt(append(buf[:0], "item-"...), int64(100_000_000+i), 10)
			w.Add(string(buf), ts)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		f := footprint{size: int64(w.SizeBytes()), heap: int64(after.HeapAlloc) - int64(before.HeapAlloc)}
		runtime.KeepAlive(w)
		return f
	}
	measure(1000) // the first window also warms up the runtime's own allocations
	small := measure(10_000)
	large := measure(most)
	t.Logf("10k distinct: SizeBytes %d, heap %d; %s distinct: SizeBytes %d, heap %d",
		small.size, small.heap, fmt.Sprint(most), large.size, large.heap)
	if small.size != large.size {
		t.Errorf("SizeBytes grew from %d to %d", small.size, large.size)
	}
	if d := large.heap - small.heap; d > 16<<10 || d < -16<<10 {
		t.Errorf("live heap changed by %d bytes (%d → %d)", d, small.heap, large.heap)
	}
	if large.size > 4<<20 {
		t.Errorf("SizeBytes %d above 4 MiB", large.size)
	}
}
