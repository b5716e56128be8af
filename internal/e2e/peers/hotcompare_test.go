//go:build peers

package peers

import (
	"strings"
	"testing"

	"github.com/rankstream/rankstream/sketch"
)

// TestCompareWindowsFindsDisagreements: the comparison that fails BenchmarkHotPeers passes
// windows that agree, and finds each kind of disagreement, the one the benchmark met first among
// them: a first window published with a quarter of its queries (the peer's "weather" 208 where
// ours is exactly 892), its dropped 0, the late queries counted in a later window.
func TestCompareWindowsFindsDisagreements(t *testing.T) {
	const e1, e2, e3 = 5_000, 10_000, 15_000
	// agreeing returns three windows of ours (a sketch: the third item's count is a bound) and
	// the peer's exact ones, which agree.
	agreeing := func() (ours, peer map[int64]window) {
		ours, peer = map[int64]window{}, map[int64]window{}
		for i, end := range []int64{e1, e2, e3} {
			n := uint64(i + 1)
			ours[end] = window{items: []sketch.Item{{Item: "weather", Count: 892 * n}, {Item: "news", Count: 500 * n}, {Item: "maps", Count: 300 * n, Error: 20}}}
			peer[end] = window{items: []sketch.Item{{Item: "weather", Count: 892 * n}, {Item: "news", Count: 500 * n}, {Item: "maps", Count: 300*n - 10}}}
		}
		return ours, peer
	}
	windows, ranks, bounds, err := compareWindows(agreeing())
	if err != nil || windows != 3 || ranks != 6 || bounds != 9 {
		t.Fatalf("agreeing windows: %d windows, %d ranks, %d bounds, %v; want 3, 6, 9, nil", windows, ranks, bounds, err)
	}

	for _, c := range []struct {
		name   string
		change func(ours, peer map[int64]window)
		want   string
	}{
		{"a first window short of three quarters of its queries, their drop counted later", func(_, peer map[int64]window) {
			peer[e1].items[0].Count = 208
			w := peer[e2]
			w.dropped = 684
			peer[e2] = w
		}, "the peer dropped 684 queries as late (the first in the window ending 1970-01-01T00:00:10Z)"},
		{"the same count short without any drop", func(_, peer map[int64]window) { peer[e1].items[0].Count = 208 },
			`"weather" counted 208 by the peer, outside our bounds [892, 892]`},
		{"a count above our bound", func(_, peer map[int64]window) { peer[e3].items[2].Count = 901 },
			`"maps" counted 901 by the peer, outside our bounds [880, 900]`},
		{"a count below our bound", func(_, peer map[int64]window) { peer[e2].items[2].Count = 559 },
			`"maps" counted 559 by the peer, outside our bounds [580, 600]`},
		{"a proven rank held by another term", func(_, peer map[int64]window) {
			peer[e3].items[0], peer[e3].items[1] = peer[e3].items[1], peer[e3].items[0]
		}, `rank 1 is "weather" (2676, proven) in ours, "news" (1500) in the peer's`},
		{"a proven rank missing", func(_, peer map[int64]window) {
			w := peer[e2]
			w.items = w.items[:1]
			peer[e2] = w
		}, `rank 2 is "news" (1000, proven) in ours, missing in the peer's`},
		{"a drop of ours", func(ours, _ map[int64]window) {
			w := ours[e3]
			w.dropped = 1
			ours[e3] = w
		}, "rankstream dropped 1 queries as late"},
		{"a window the peer did not publish", func(_, peer map[int64]window) { delete(peer, e3) },
			"windows: rankstream published 3 (1970-01-01T00:00:05Z to 1970-01-01T00:00:15Z), the peer 2"},
		{"an error in the peer's counts", func(_, peer map[int64]window) { peer[e1].items[1].Error = 1 },
			`the peer's "news" has error 1`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ours, peer := agreeing()
			c.change(ours, peer)
			if _, _, _, err := compareWindows(ours, peer); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
	if _, _, _, err := compareWindows(map[int64]window{}, map[int64]window{}); err == nil {
		t.Fatal("no window at all compared without an error")
	}
}
