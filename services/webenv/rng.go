package webenv

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
)

// rng is the seeded generator of one problem. It is a PCG stream keyed by
// (family, site, seed), so that the same triple always gives the same problem
// and neighbouring seeds give unrelated ones.
type rng struct{ r *rand.Rand }

func newRNG(family, site string, seed int64) *rng {
	h := fnv.New64a()
	h.Write([]byte(family))
	h.Write([]byte{0})
	h.Write([]byte(site))
	h.Write([]byte{0})
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	s1 := h.Sum64()
	h.Write([]byte("stream"))
	return &rng{r: rand.New(rand.NewPCG(s1, h.Sum64()))}
}

// Intn returns a number in [0, n); n <= 0 gives 0.
func (g *rng) Intn(n int) int {
	if n <= 0 {
		return 0
	}
	return g.r.IntN(n)
}

// Range returns a number in [lo, hi].
func (g *rng) Range(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + g.r.IntN(hi-lo+1)
}

// Chance reports true with probability p.
func (g *rng) Chance(p float64) bool { return g.r.Float64() < p }

// Pick returns one element of xs.
func (g *rng) Pick(xs []string) string { return xs[g.Intn(len(xs))] }

// Sample returns k distinct elements of xs in random order (all of xs when k
// is larger).
func (g *rng) Sample(xs []string, k int) []string {
	idx := g.r.Perm(len(xs))
	if k > len(xs) {
		k = len(xs)
	}
	out := make([]string, k)
	for i := range k {
		out[i] = xs[idx[i]]
	}
	return out
}

// Shuffle shuffles xs in place.
func (g *rng) Shuffle(n int, swap func(i, j int)) { g.r.Shuffle(n, swap) }

// Perm returns a permutation of [0, n).
func (g *rng) Perm(n int) []int { return g.r.Perm(n) }

// Digits returns n random decimal digits.
func (g *rng) Digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + g.Intn(10))
	}
	return string(b)
}

// Code returns a short code of upper-case letters and digits.
func (g *rng) Code(n int) string {
	const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.Intn(len(alphabet))]
	}
	return string(b)
}

// Word returns a pronounceable pseudo-word of n syllables, for labels that
// must not collide with the word lists.
func (g *rng) Word(n int) string {
	cons := "bdfgklmnprstvz"
	vows := "aeiou"
	b := make([]byte, 0, 2*n)
	for range n {
		b = append(b, cons[g.Intn(len(cons))], vows[g.Intn(len(vows))])
	}
	return string(b)
}

// itoa is strconv.Itoa, short for the generators.
func itoa(n int) string { return strconv.Itoa(n) }
