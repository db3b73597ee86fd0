package bench

import (
	"math"
	"testing"
)

// The bootstrap on inputs whose intervals can be checked by hand.
func TestBootstrapMedian(t *testing.T) {
	// No spread: every resample's median is 7.
	if m, lo, hi := bootstrapMedian([]float64{7, 7, 7, 7, 7}, 1000, 1); m != 7 || lo != 7 || hi != 7 {
		t.Errorf("all-equal: %v [%v, %v], want 7 [7, 7]", m, lo, hi)
	}
	// A resample's median is a sample value (odd count), so the interval
	// lies within min..max and holds the median.
	xs := []float64{30, 10, 50, 20, 40}
	m, lo, hi := bootstrapMedian(xs, bootstrapResamples, bootstrapSeed)
	if m != 30 || lo < 10 || hi > 50 || lo > m || hi < m || lo == hi {
		t.Errorf("10..50: %v [%v, %v], want 30 within a non-empty [10, 50]", m, lo, hi)
	}
	// Two values: the resamples' medians are 1 (¼), 1.5 (½) and 2 (¼), so
	// the 2.5% and 97.5% percentiles are 1 and 2.
	if m, lo, hi := bootstrapMedian([]float64{1, 2}, bootstrapResamples, bootstrapSeed); m != 1.5 || lo != 1 || hi != 2 {
		t.Errorf("{1, 2}: %v [%v, %v], want 1.5 [1, 2]", m, lo, hi)
	}
	// One value has no spread.
	if m, lo, hi := bootstrapMedian([]float64{3}, 100, 1); m != 3 || lo != 3 || hi != 3 {
		t.Errorf("{3}: %v [%v, %v], want 3 [3, 3]", m, lo, hi)
	}
	if m, lo, hi := bootstrapMedian(nil, 100, 1); !math.IsNaN(m) || !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("empty: %v [%v, %v], want NaNs", m, lo, hi)
	}
	// The same seed, the same output: the printed intervals are
	// reproducible.
	if m2, lo2, hi2 := bootstrapMedian(xs, bootstrapResamples, bootstrapSeed); m2 != m || lo2 != lo || hi2 != hi {
		t.Errorf("same seed: %v [%v, %v], then %v [%v, %v]", m, lo, hi, m2, lo2, hi2)
	}
	// The input is left as it was (the caller's runs are in order).
	if xs[0] != 30 || xs[4] != 40 {
		t.Errorf("the input was reordered: %v", xs)
	}
}

func TestBootstrapRatio(t *testing.T) {
	xs := []float64{30, 10, 50, 20, 40}
	r, lo, hi := bootstrapRatio(xs, xs, bootstrapResamples, bootstrapSeed)
	if r != 1 || lo > 1 || hi < 1 || lo <= 0 {
		t.Errorf("identical samples: %v [%v, %v], want 1 in a positive interval holding 1", r, lo, hi)
	}
	// Constant samples: every resample's ratio is 6/2.
	if r, lo, hi := bootstrapRatio([]float64{6, 6, 6}, []float64{2, 2}, 1000, 1); r != 3 || lo != 3 || hi != 3 {
		t.Errorf("6/2: %v [%v, %v], want 3 [3, 3]", r, lo, hi)
	}
	// A resampled ratio is a ratio of sample values: within min/max..max/min.
	num, den := []float64{9, 12, 10}, []float64{3, 4, 2}
	r, lo, hi = bootstrapRatio(num, den, bootstrapResamples, bootstrapSeed)
	if r != 10.0/3 || lo < 9.0/4 || hi > 12.0/2 || lo > r || hi < r {
		t.Errorf("{9,12,10}/{3,4,2}: %v [%v, %v], want 3.33 within [2.25, 6]", r, lo, hi)
	}
	if r2, lo2, hi2 := bootstrapRatio(num, den, bootstrapResamples, bootstrapSeed); r2 != r || lo2 != lo || hi2 != hi {
		t.Errorf("same seed: %v [%v, %v], then %v [%v, %v]", r, lo, hi, r2, lo2, hi2)
	}
	if r, _, _ := bootstrapRatio(nil, den, 100, 1); !math.IsNaN(r) {
		t.Errorf("empty: %v, want NaN", r)
	}
}
