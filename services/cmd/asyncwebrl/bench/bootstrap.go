package bench

import (
	"math"
	"math/rand/v2"
	"slices"
)

// bootstrapResamples is how many resamples bench train's intervals take:
// enough that the 2.5% and 97.5% percentiles move by less than the printed
// precision from one seed to another, and still instant for a handful of
// runs.
const bootstrapResamples = 10000

// bootstrapSeed seeds the resampling, so that the same runs always print
// the same intervals.
const bootstrapSeed = 38

// bootstrapMedian is the median of xs with a 95% percentile-bootstrap
// interval: the 2.5% and 97.5% percentiles of the medians of resamples
// samples of xs drawn with replacement. The draws come from a PCG seeded
// with seed, so the same input gives the same output. An empty xs gives
// NaNs.
func bootstrapMedian(xs []float64, resamples int, seed uint64) (med, lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	rng := newBootstrapRand(seed)
	buf := make([]float64, len(xs))
	stats := make([]float64, resamples)
	for i := range stats {
		stats[i] = resampleMedian(rng, xs, buf)
	}
	lo, hi = percentileInterval(stats)
	return median(xs), lo, hi
}

// bootstrapRatio is median(num)/median(den) with a 95% percentile-bootstrap
// interval: num and den are resampled independently (they are separate
// runs, not pairs: run k of two modes shares a seed but not its timing),
// and each resample gives the ratio of the two medians. den's values must
// be positive; an empty input gives NaNs.
func bootstrapRatio(num, den []float64, resamples int, seed uint64) (ratio, lo, hi float64) {
	if len(num) == 0 || len(den) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	rng := newBootstrapRand(seed)
	nb, db := make([]float64, len(num)), make([]float64, len(den))
	stats := make([]float64, resamples)
	for i := range stats {
		stats[i] = resampleMedian(rng, num, nb) / resampleMedian(rng, den, db)
	}
	lo, hi = percentileInterval(stats)
	return median(num) / median(den), lo, hi
}

func newBootstrapRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0xb0075d))
}

// resampleMedian fills buf with len(xs) draws from xs with replacement and
// returns their median.
func resampleMedian(rng *rand.Rand, xs, buf []float64) float64 {
	for j := range buf {
		buf[j] = xs[rng.IntN(len(xs))]
	}
	return median(buf)
}

// percentileInterval is the 2.5% and 97.5% percentiles of stats (sorted in
// place), interpolated between neighbouring order statistics.
func percentileInterval(stats []float64) (lo, hi float64) {
	if len(stats) == 0 {
		return math.NaN(), math.NaN()
	}
	slices.Sort(stats)
	return quantile(stats, 0.025), quantile(stats, 0.975)
}

// quantile of sorted s, linear between the order statistics around
// q·(n-1).
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}
