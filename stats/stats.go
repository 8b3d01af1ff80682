// Package stats provides the small, exact statistics the skill lifecycle
// reports: Wilson score intervals for a rate, Fisher's exact test for two
// rates, and how many observations a difference needs before a test can
// see it. Pure functions over counts.
package stats

import (
	"math"
)

// Z95 is the two-sided 95% normal quantile.
const Z95 = 1.959963984540054

// zPower80 is the one-sided normal quantile of 80% power.
const zPower80 = 0.8416212335729143

// Interval is a confidence interval of a proportion.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Wilson returns the Wilson score interval of k successes in n trials at
// normal quantile z (Z95 for 95%), the interval R's prop.test gives without
// continuity correction. With n = 0 nothing is known: [0, 1].
func Wilson(k, n int, z float64) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	k = min(max(k, 0), n)
	nf, p := float64(n), float64(k)/float64(n)
	z2 := z * z
	d := 1 + z2/nf
	center := (p + z2/(2*nf)) / d
	half := z / d * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf))
	return Interval{Low: math.Max(0, center-half), High: math.Min(1, center+half)}
}

// FisherExact returns the two-sided p-value of Fisher's exact test for the
// 2×2 table [[a, b], [c, d]]: the probability, with the margins fixed, of
// a table at most as likely as the one observed (R's fisher.test and
// scipy.stats.fisher_exact, with the same 1e-7 relative tolerance).
func FisherExact(a, b, c, d int) float64 {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return math.NaN()
	}
	r1, r2, c1 := a+b, c+d, a+c
	n := r1 + r2
	if n == 0 {
		return 1
	}
	lnC := func(n, k int) float64 {
		x, _ := math.Lgamma(float64(n + 1))
		y, _ := math.Lgamma(float64(k + 1))
		z, _ := math.Lgamma(float64(n - k + 1))
		return x - y - z
	}
	denom := lnC(n, c1)
	prob := func(x int) float64 { return math.Exp(lnC(r1, x) + lnC(r2, c1-x) - denom) }
	observed := prob(a)
	p := 0.0
	for x := max(0, c1-r2); x <= min(r1, c1); x++ {
		if q := prob(x); q <= observed*(1+1e-7) {
			p += q
		}
	}
	return math.Min(1, p)
}

// SampleSize returns the observations each of two groups needs for a
// two-sided test at α = 0.05 with 80% power to tell rates p1 and p2
// apart (the normal approximation for two proportions). It returns 0 when
// the rates are equal (no difference to detect).
func SampleSize(p1, p2 float64) int {
	if p1 == p2 || math.IsNaN(p1) || math.IsNaN(p2) {
		return 0
	}
	pbar := (p1 + p2) / 2
	num := Z95*math.Sqrt(2*pbar*(1-pbar)) + zPower80*math.Sqrt(p1*(1-p1)+p2*(1-p2))
	return int(math.Ceil(num * num / ((p1 - p2) * (p1 - p2))))
}

// ExactMinimum returns the fewest observations per group (at most limit)
// with which Fisher's exact test at α = 0.05 rejects equal rates on the
// table the rates p1 and p2 would give: the normal approximation of
// SampleSize undercounts at rates near 0 or 1, where one run each can
// never be significant. It returns limit when no smaller count does, 0
// when the rates are equal.
func ExactMinimum(p1, p2 float64, limit int) int {
	if p1 == p2 || math.IsNaN(p1) || math.IsNaN(p2) {
		return 0
	}
	for n := 2; n < limit; n++ {
		a, c := int(math.Round(float64(n)*p1)), int(math.Round(float64(n)*p2))
		if FisherExact(a, n-a, c, n-c) < 0.05 {
			return n
		}
	}
	return limit
}
