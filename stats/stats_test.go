package stats

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

// Reference values: R 4.x prop.test(k, n, correct = FALSE)$conf.int (the
// Wilson interval) and fisher.test(matrix(...))$p.value; the same numbers
// are printed by scipy.stats.fisher_exact (its documentation's example
// [[1, 9], [11, 3]] gives 0.002759) and Fisher's lady tasting tea
// ([[3, 1], [1, 3]]: 0.4857).
func TestWilson(t *testing.T) {
	cases := []struct {
		k, n      int
		low, high float64
	}{
		{0, 10, 0, 0.2775328},
		{5, 10, 0.2365931, 0.7634069},
		{1, 1, 0.2065493, 1},
		{0, 1, 0, 0.7934507},
		{81, 263, 0.2552885, 0.3662096},
		{3, 40, 0.0258360, 0.1986423},
		{0, 0, 0, 1},
	}
	for _, c := range cases {
		got := Wilson(c.k, c.n, Z95)
		if !near(got.Low, c.low, 1e-6) || !near(got.High, c.high, 1e-6) {
			t.Errorf("Wilson(%d, %d) = [%.7f, %.7f], want [%.7f, %.7f]", c.k, c.n, got.Low, got.High, c.low, c.high)
		}
	}
}

func TestFisherExact(t *testing.T) {
	cases := []struct {
		a, b, c, d int
		p          float64
	}{
		{3, 1, 1, 3, 0.4857143},
		{1, 9, 11, 3, 0.002759456},
		{8, 2, 1, 5, 0.03496503},
		{10, 10, 2, 18, 0.01381415},
		{1, 0, 0, 1, 1},
		{0, 5, 0, 5, 1},
		{0, 0, 0, 0, 1},
	}
	for _, c := range cases {
		if got := FisherExact(c.a, c.b, c.c, c.d); !near(got, c.p, 1e-7) {
			t.Errorf("FisherExact(%d %d %d %d) = %.9f, want %.9f", c.a, c.b, c.c, c.d, got, c.p)
		}
	}
	// Symmetric in the rows and in the columns.
	if FisherExact(1, 9, 11, 3) != FisherExact(11, 3, 1, 9) || !near(FisherExact(1, 9, 11, 3), FisherExact(9, 1, 3, 11), 1e-12) {
		t.Error("FisherExact is not symmetric")
	}
	if !math.IsNaN(FisherExact(-1, 0, 0, 0)) {
		t.Error("a negative count must give NaN")
	}
}

func TestSampleSize(t *testing.T) {
	// 50% vs 25%: the textbook figure is 58 per group (Fleiss, without
	// continuity correction).
	if n := SampleSize(0.5, 0.25); n != 58 {
		t.Errorf("SampleSize(0.5, 0.25) = %d, want 58", n)
	}
	if n := SampleSize(0.3, 0.3); n != 0 {
		t.Errorf("SampleSize of equal rates = %d, want 0", n)
	}
	if a, b := SampleSize(0.2, 0.1), SampleSize(0.2, 0.15); a >= b {
		t.Errorf("a smaller difference needs more runs: %d vs %d", a, b)
	}
}

func TestExactMinimum(t *testing.T) {
	// 4/4 vs 0/4: p = 0.0286; 3/3 vs 0/3: p = 0.1.
	if n := ExactMinimum(1, 0, 1000); n != 4 {
		t.Errorf("ExactMinimum(1, 0) = %d, want 4", n)
	}
	if n := ExactMinimum(0.5, 0.5, 1000); n != 0 {
		t.Errorf("equal rates: %d", n)
	}
	if n := ExactMinimum(0.5, 0.45, 50); n != 50 {
		t.Errorf("a tiny difference within 50: %d", n)
	}
}
