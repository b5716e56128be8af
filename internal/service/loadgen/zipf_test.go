package loadgen

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestZipfMatchesThePMF draws from the sampler and compares the frequencies with the exact
// probabilities (k^-s / H(n, s), computed here independently) by a chi-square test over all
// ranks and by the relative error of the ten most popular ones, for skews below, at and
// above 1.
func TestZipfMatchesThePMF(t *testing.T) {
	const n, draws = 1000, 1_000_000
	for _, s := range []float64{0.8, 1.0, 1.2} {
		z, err := newZipf(n, s)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(42, uint64(s*10)))
		counts := make([]int, n)
		for range draws {
			counts[z.rank(rng.Float64())]++
		}
		pmf := make([]float64, n)
		h := 0.0
		for k := n; k >= 1; k-- { // smallest terms first, for accuracy
			h += math.Pow(float64(k), -s)
		}
		for k := range pmf {
			pmf[k] = math.Pow(float64(k+1), -s) / h
		}
		chi2 := 0.0
		for k, c := range counts {
			e := pmf[k] * draws
			chi2 += (float64(c) - e) * (float64(c) - e) / e
		}
		// n−1 degrees of freedom: mean 999, standard deviation about 45. Six standard
		// deviations above the mean never happens by chance with a fixed seed; a sampler off
		// by 1% on the head ranks lands far above it.
		dof := float64(n - 1)
		if limit := dof + 6*math.Sqrt(2*dof); chi2 > limit {
			t.Errorf("s=%v: chi-square %.0f over %d ranks, above %.0f", s, chi2, n, limit)
		}
		for k := range 10 {
			if rel := math.Abs(float64(counts[k])/draws-pmf[k]) / pmf[k]; rel > 0.03 {
				t.Errorf("s=%v rank %d: frequency %.5f, probability %.5f (%.1f%% off)", s, k+1, float64(counts[k])/draws, pmf[k], 100*rel)
			}
		}
	}
}

func TestZipfEdges(t *testing.T) {
	z, err := newZipf(1, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if z.rank(0) != 0 || z.rank(math.Nextafter(1, 0)) != 0 {
		t.Fatal("one rank: every draw must be rank 0")
	}
	z, _ = newZipf(100, 1)
	if z.rank(0) != 0 || z.rank(math.Nextafter(1, 0)) != 99 {
		t.Fatalf("u=0 gives rank %d, u→1 gives rank %d; want 0 and 99", z.rank(0), z.rank(math.Nextafter(1, 0)))
	}
	for _, bad := range []struct {
		n int
		s float64
	}{{0, 1}, {10, 0}, {10, -1}, {10, math.NaN()}, {10, math.Inf(1)}} {
		if _, err := newZipf(bad.n, bad.s); err == nil {
			t.Errorf("newZipf(%d, %v) accepted", bad.n, bad.s)
		}
	}
}
