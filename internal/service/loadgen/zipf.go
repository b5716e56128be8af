package loadgen

import (
	"fmt"
	"math"
	"sort"
)

// zipf draws ranks 0..n-1 with P(rank k) = (k+1)^-s / H(n, s), where H(n, s) is the sum of
// i^-s for i = 1..n, for any skew s > 0. math/rand's Zipf needs s > 1, but query popularity is
// usually measured at s ≤ 1. It inverts the cumulative distribution, precomputed once, by
// binary search: exact up to float64 rounding, O(log n) per draw, 8 bytes per rank.
type zipf struct{ cdf []float64 }

func newZipf(n int, s float64) (*zipf, error) {
	if n < 1 || s <= 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return nil, fmt.Errorf("loadgen: zipf over %d ranks with skew %v: want at least 1 rank and a finite skew > 0", n, s)
	}
	cdf := make([]float64, n)
	sum := 0.0
	for k := range n {
		sum += math.Pow(float64(k+1), -s)
		cdf[k] = sum
	}
	for k := range cdf {
		cdf[k] /= sum
	}
	cdf[n-1] = 1 // no rounding gap at the top
	return &zipf{cdf: cdf}, nil
}

// rank maps u, uniform in [0, 1), to a rank: the first whose cumulative probability exceeds u.
func (z *zipf) rank(u float64) int {
	return sort.Search(len(z.cdf), func(k int) bool { return z.cdf[k] > u })
}
