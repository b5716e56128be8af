package sketch

// The front filter is a small direct-mapped cache, in front of the hash and
// the candidate table, of candidates whose items are 1 to 16 bytes long (the
// Augmented Sketch's filter of Roy, Khan and Alonso, 2016, over the exact
// candidates). An entry holds the item's bytes as two words and its length,
// which identify it exactly, and the candidate's index: an event of an item
// found there is counted in the candidate's slot like any candidate's event,
// without computing Hash or probing the table. At high skew most events are
// of a few dozen items, which the filter holds in the first-level cache.
//
// The filter only caches the candidate table: it holds no count, a window
// with an empty filter has the same state and results, and it is neither
// encoded nor merged. A candidate enters its entry when one of its events
// goes through the table and the entry is empty or holds a candidate with
// fewer exact events; it leaves when it stops being a candidate.

// filterEntry is a candidate in the filter; n == 0 is an empty entry.
type filterEntry struct {
	a, b uint64 // the item's bytes, see filterKey
	n    int32  // the item's length
	c    int32  // the candidate
}

// Sizes of the filter: entries and bytes per entry (amd64).
const (
	filterBits       = 8
	filterEntries    = 1 << filterBits
	filterEntryBytes = 24
)

// filterKey returns the words that identify an item of 1 to 16 bytes (with
// its length, they cover every byte), and whether the item fits.
func filterKey(item string) (a, b uint64, ok bool) {
	switch n := len(item); {
	case n >= 8 && n <= 16:
		return load64(item, 0), load64(item, n-8), true
	case n >= 4 && n < 8:
		return load32(item, 0), load32(item, n-4), true
	case n > 0 && n < 4:
		return uint64(item[0]) | uint64(item[n>>1])<<8 | uint64(item[n-1])<<16, 0, true
	}
	return 0, 0, false
}

// filterIndex maps an item's key to its filter entry: one multiply, far
// cheaper than Hash.
func filterIndex(a, b uint64, n int) int {
	return int(((a ^ (b<<29 | b>>35) ^ uint64(n)) * 0x9E3779B97F4A7C15) >> (64 - filterBits))
}

// filterDrop removes candidate c, which stops being one, from the filter.
func (w *Window) filterDrop(c int32) {
	item := w.cands[c].item
	if a, b, ok := filterKey(item); ok {
		if e := &w.filter[filterIndex(a, b, len(item))]; e.n != 0 && e.c == c {
			*e = filterEntry{}
		}
	}
}
