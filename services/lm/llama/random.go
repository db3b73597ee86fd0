package llama

import (
	"math/rand/v2"

	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
)

// Random is a llama of shape s with random weights drawn from seed (norms
// near 1, projections of small variance, the output tied to the
// embedding): a model for tests of what runs models, at any size.
func Random(s gguf.Llama, seed uint64) *Model {
	rng := rand.New(rand.NewPCG(seed, 1))
	r := func(n int, scale float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = scale * float32(rng.NormFloat64())
		}
		return v
	}
	one := func(n int) []float32 {
		v := r(n, 0.1)
		for i := range v {
			v[i] += 1
		}
		return v
	}
	w, ff, kvw := s.Width, s.FeedForward, s.KVHeads*s.Width/s.Heads
	m := &Model{Shape: s, embed: r(s.Vocab*w, 0.5), norm: one(w)}
	m.output = m.embed
	for range s.Blocks {
		m.blocks = append(m.blocks, block{attnNorm: one(w), ffnNorm: one(w),
			q: r(w*w, 0.3), k: r(kvw*w, 0.3), v: r(kvw*w, 0.3), o: r(w*w, 0.2),
			gate: r(ff*w, 0.2), up: r(ff*w, 0.2), down: r(w*ff, 0.2)})
	}
	return m
}
