package sketch_test

import (
	"math"
	"math/rand/v2"
	"testing"
)

// zipf draws ranks 1..n with P(k) ∝ k^−s for any s > 0, including s ≤ 1
// where math/rand's Zipf does not apply. It is the rejection-inversion
// method of Hörmann and Derflinger ("Rejection-inversion to generate
// variates from monotone discrete distributions", 1996), as in Apache
// Commons RNG: O(1) per draw, no table.
type zipf struct {
	rng        *rand.Rand
	n, s       float64
	hX1, hN, t float64 // H(1.5) − 1, H(n + 0.5), the squeeze threshold
}

func newZipf(rng *rand.Rand, s float64, n int) *zipf {
	z := &zipf{rng: rng, n: float64(n), s: s}
	z.hX1 = z.hIntegral(1.5) - 1
	z.hN = z.hIntegral(z.n + 0.5)
	z.t = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// next returns a rank in 1..n.
func (z *zipf) next() int {
	for {
		u := z.hN + z.rng.Float64()*(z.hX1-z.hN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		k = max(1, min(k, z.n))
		if k-x <= z.t || u >= z.hIntegral(k+0.5)-z.h(k) {
			return int(k)
		}
	}
}

// h is the unnormalised probability x^−s.
func (z *zipf) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// hIntegral is an antiderivative of h: (x^(1−s) − 1)/(1 − s), or log x.
func (z *zipf) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return helper2((1-z.s)*lx) * lx
}

func (z *zipf) hIntegralInverse(x float64) float64 {
	t := max(x*(1-z.s), -1)
	return math.Exp(helper1(t) * x)
}

// helper1 is log(1+x)/x, accurate near 0.
func helper1(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// helper2 is (exp(x)−1)/x, accurate near 0.
func helper2(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}

// TestZipfMatchesDistribution checks the generator's frequencies of the
// first ranks and of the tail against the exact probabilities.
func TestZipfMatchesDistribution(t *testing.T) {
	const n, draws = 1000, 400_000
	for _, s := range []float64{0.8, 1.0, 1.2} {
		z := newZipf(rand.New(rand.NewPCG(1, 2)), s, n)
		counts := make([]int, n+1)
		for range draws {
			k := z.next()
			if k < 1 || k > n {
				t.Fatalf("s=%v: rank %d out of 1..%d", s, k, n)
			}
			counts[k]++
		}
		var norm float64
		for k := 1; k <= n; k++ {
			norm += math.Pow(float64(k), -s)
		}
		check := func(name string, lo, hi int) {
			t.Helper()
			var p float64
			got := 0
			for k := lo; k <= hi; k++ {
				p += math.Pow(float64(k), -s) / norm
				got += counts[k]
			}
			want := p * draws
			sd := math.Sqrt(want * (1 - p))
			if math.Abs(float64(got)-want) > 5*sd {
				t.Errorf("s=%v %s: got %d draws, want %.0f ± %.0f", s, name, got, want, 5*sd)
			}
		}
		check("rank 1", 1, 1)
		check("rank 2", 2, 2)
		check("rank 10", 10, 10)
		check("ranks 11-100", 11, 100)
		check("ranks 101-1000", 101, 1000)
	}
}
