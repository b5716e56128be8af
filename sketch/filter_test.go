package sketch

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestFilterKeyIsExact checks that the filter's key identifies an item: no
// two distinct items of 1 to 16 bytes share it (all strings over a two-letter
// alphabet up to 11 bytes, and near-identical longer ones), and that longer
// or empty items are left out.
func TestFilterKeyIsExact(t *testing.T) {
	type key struct {
		a, b uint64
		n    int
	}
	seen := map[key]string{}
	add := func(s string) {
		a, b, ok := filterKey(s)
		if want := len(s) >= 1 && len(s) <= 16; ok != want {
			t.Fatalf("filterKey(%q) fits %v, want %v", s, ok, want)
		}
		if !ok {
			return
		}
		k := key{a, b, len(s)}
		if other, dup := seen[k]; dup && other != s {
			t.Fatalf("%q and %q share the filter key %+v", other, s, k)
		}
		seen[k] = s
	}
	for n := 0; n <= 11; n++ {
		for bits := range 1 << n {
			var sb strings.Builder
			for i := range n {
				sb.WriteByte("ab"[bits>>i&1])
			}
			add(sb.String())
		}
	}
	base := "0123456789abcdefghij"
	for n := 12; n <= 20; n++ {
		for i := range n {
			s := []byte(base[:n])
			s[i] = 'X'
			add(string(s))
		}
	}
}

// TestFilterOnlyCaches checks that the front filter is only a cache of the
// candidate table: a window whose filter is emptied after every event, one
// fed through AddHash and one fed through Add reach byte-identical states,
// and the filter did find events.
func TestFilterOnlyCaches(t *testing.T) {
	cfg := defaultConfig()
	cfg.width, cfg.candidates, cfg.k = 64, 512, 8
	cfg.window, cfg.slide, cfg.lookahead, cfg.blocks = time.Minute, time.Second, 5*time.Second, 6
	cfg.resolve()
	if err := cfg.validate(); err != nil {
		t.Fatal(err)
	}
	cached, uncached, hashed := newWindow(cfg), newWindow(cfg), newWindow(cfg)
	rng := rand.New(rand.NewPCG(3, 4))
	var items []string
	for n := range 24 {
		items = append(items, strings.Repeat("q", n)+fmt.Sprint(n%3), fmt.Sprint(n, "x", strings.Repeat("z", n)))
	}
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	hits := 0
	for i := range 100000 {
		// Skewed, so that a few items are heavy; sometimes late.
		it := items[min(rng.IntN(len(items)), rng.IntN(len(items)), rng.IntN(len(items)))]
		ts := start.Add(time.Duration(i) * 20 * time.Millisecond)
		if rng.IntN(50) == 0 {
			ts = ts.Add(-time.Duration(rng.IntN(90)) * time.Second)
		}
		if a, b, ok := filterKey(it); ok {
			if e := cached.filter[filterIndex(a, b, len(it))]; e.n == int32(len(it)) && e.a == a && e.b == b {
				hits++
			}
		}
		cached.Add(it, ts)
		uncached.Add(it, ts)
		clear(uncached.filter)
		hashed.AddHash(Hash(it), it, ts)
		if i%2000 == 0 {
			for _, w := range []*Window{cached, uncached, hashed} {
				w.Advance(ts.Add(-2 * time.Second))
				if err := w.check(); err != nil {
					t.Fatalf("event %d: %v", i, err)
				}
			}
		}
	}
	if hits < 20000 {
		t.Errorf("the filter found %d of 100000 events; want most of the heavy items'", hits)
	}
	want, err := uncached.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]*Window{"through the filter": cached, "by AddHash": hashed} {
		if got, err := w.MarshalBinary(); err != nil || !bytes.Equal(got, want) {
			t.Errorf("state %s differs from the state without the filter (err %v)", name, err)
		}
	}
}
