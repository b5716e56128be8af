package sketch

import (
	"cmp"
	"slices"
)

// Item is an item with its estimated count in a window: the true count lies
// in [Count − Error, Count] (see the package documentation for when).
type Item struct {
	Item  string
	Count uint64
	Error uint64
}

// TopK returns the K items with the largest counts in the window, by count
// descending then item ascending. Items whose count may be zero are left
// out.
func (w *Window) TopK() []Item { return w.AppendTopK(nil) }

// AppendTopK appends TopK's items to dst and returns the extended slice.
// It allocates only when dst lacks room for the candidates.
func (w *Window) AppendTopK(dst []Item) []Item {
	w.lazyInit()
	n0 := len(dst)
	// From the heap's leaves to its root: the larger keys first, so that
	// firstSorted's first k are large and few items replace one of them.
	last := len(w.heap) - 1
	for i := last; i >= 0; i-- {
		cd := &w.cands[w.heap[i].c]
		dst = append(dst, Item{Item: cd.item, Count: cd.total + cd.pre, Error: cd.pre})
	}
	items := dst[n0:]
	// bounds for every candidate at once: a candidate's events ahead of the
	// window's end leave its count, a lookahead slot at a time, walking the
	// ring by rows and only the slots holding events (a slot without events
	// has only zero counts: check verifies it).
	w.flush()
	stride := w.cfg.candidates
	p := int(floorMod(w.end, int64(w.rslots)))
	for range w.rslots - w.nslots {
		if w.slotEvents[p] > 0 {
			row := w.ring[p*stride : (p+1)*stride]
			for i, e := range w.heap {
				items[last-i].Count -= uint64(row[e.c])
			}
		}
		if p++; p == w.rslots {
			p = 0
		}
	}
	items = slices.DeleteFunc(items, func(it Item) bool { return it.Count == 0 })
	return dst[:n0+len(firstSorted(items, w.cfg.k))]
}

// firstSorted moves the k first of items in compareItems order to its
// front, sorted, and returns them; the rest of items is left in any order,
// some of it overwritten. It keeps the k best in a heap whose root is the
// worst of them, so that most items cost one comparison, then sorts only
// those k.
func firstSorted(items []Item, k int) []Item {
	if len(items) > k {
		h := items[:k]
		for i := k/2 - 1; i >= 0; i-- {
			siftWorst(h, i)
		}
		for _, it := range items[k:] {
			if compareItems(it, h[0]) < 0 {
				h[0] = it
				siftWorst(h, 0)
			}
		}
		items = h
	}
	slices.SortFunc(items, compareItems)
	return items
}

// siftWorst moves h[i] towards the leaves of a heap whose root is the last
// in compareItems order.
func siftWorst(h []Item, i int) {
	for {
		j := 2*i + 1
		if j >= len(h) {
			return
		}
		if r := j + 1; r < len(h) && compareItems(h[r], h[j]) > 0 {
			j = r
		}
		if compareItems(h[j], h[i]) <= 0 {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

// compareItems orders items by count descending, then by item ascending,
// then by error ascending.
func compareItems(a, b Item) int {
	if c := cmp.Compare(b.Count, a.Count); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Item, b.Item); c != 0 {
		return c
	}
	return cmp.Compare(a.Error, b.Error)
}

// bounds computes candidate c's count and error in the window: the exact
// count since admission in the window's slots is the lower bound; the bound
// on earlier events (at most the sketch's estimate, which holds them) makes
// the upper bound.
func (w *Window) bounds(c int32) Item {
	cd := &w.cands[c]
	var ahead uint64
	p := int(floorMod(w.end, int64(w.rslots)))
	for range w.rslots - w.nslots {
		ahead += uint64(w.ring[p*w.cfg.candidates+int(c)])
		if p++; p == w.rslots {
			p = 0
		}
	}
	post := cd.total - ahead
	return Item{Item: cd.item, Count: post + cd.pre, Error: cd.pre}
}

// Count returns the window's count of item with its error, as TopK would
// report it; an item that is not a candidate gets the sketch's estimate with
// an error of the same size.
func (w *Window) Count(item string) Item {
	w.lazyInit()
	h := Hash(item)
	if c := w.lookup(h, item); c >= 0 {
		return w.bounds(c)
	}
	est := w.estimate(h)
	return Item{Item: item, Count: est, Error: est}
}

// MergeTopK merges Top-K lists whose item sets are disjoint, such as those
// of partitions keyed by item, into the k largest items by count descending
// then item ascending. The result is the same whatever the order of the
// lists. An item found in several lists keeps its largest count only, which
// is exact for disjoint lists and conservative otherwise.
func MergeTopK(k int, lists ...[]Item) []Item {
	if k <= 0 {
		return nil
	}
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	all := make([]Item, 0, n)
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.SortFunc(all, compareItems)
	out := all[:0]
	seen := make(map[string]struct{}, min(n, 4*k))
	for _, it := range all {
		if len(out) == k {
			break
		}
		if _, dup := seen[it.Item]; dup {
			continue
		}
		seen[it.Item] = struct{}{}
		out = append(out, it)
	}
	return slices.Clip(out)
}
