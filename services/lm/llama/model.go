package llama

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
)

// Model is a llama model's weights, dequantized.
type Model struct {
	Shape  gguf.Llama
	embed  []float32 // [vocab][width]
	norm   []float32 // output norm [width]
	output []float32 // [vocab][width]; the embedding when tied
	blocks []block
}

type block struct {
	attnNorm, ffnNorm []float32
	q, k, v, o        []float32 // [out][in]
	gate, up, down    []float32
}

// Load reads every weight of f.
func Load(f *gguf.File) (*Model, error) {
	shape, err := f.Llama()
	if err != nil {
		return nil, err
	}
	m := &Model{Shape: shape}
	read := func(name string, want ...int) ([]float32, error) {
		v, t, err := f.Float32(name)
		if err != nil {
			return nil, err
		}
		if len(t.Dims) != len(want) {
			return nil, fmt.Errorf("tensor %s has dims %v, want %v", name, t.Dims, want)
		}
		for i := range want {
			if t.Dims[i] != want[i] {
				return nil, fmt.Errorf("tensor %s has dims %v, want %v", name, t.Dims, want)
			}
		}
		return v, nil
	}
	w, ff, hd := shape.Width, shape.FeedForward, shape.Width/shape.Heads
	kvw := shape.KVHeads * hd
	if m.embed, err = read("token_embd.weight", w, shape.Vocab); err != nil {
		return nil, err
	}
	if m.norm, err = read("output_norm.weight", w); err != nil {
		return nil, err
	}
	m.output = m.embed
	for _, t := range f.Tensors() {
		if t.Name == "output.weight" {
			if m.output, err = read("output.weight", w, shape.Vocab); err != nil {
				return nil, err
			}
		}
	}
	m.blocks = make([]block, shape.Blocks)
	for i := range m.blocks {
		b := &m.blocks[i]
		for _, p := range []struct {
			name string
			dst  *[]float32
			dims []int
		}{
			{"attn_norm", &b.attnNorm, []int{w}}, {"ffn_norm", &b.ffnNorm, []int{w}},
			{"attn_q", &b.q, []int{w, w}}, {"attn_k", &b.k, []int{w, kvw}}, {"attn_v", &b.v, []int{w, kvw}},
			{"attn_output", &b.o, []int{w, w}},
			{"ffn_gate", &b.gate, []int{w, ff}}, {"ffn_up", &b.up, []int{w, ff}}, {"ffn_down", &b.down, []int{ff, w}},
		} {
			if *p.dst, err = read(fmt.Sprintf("blk.%d.%s.weight", i, p.name), p.dims...); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// Cache holds the keys and values of the positions seen, per block.
type Cache struct {
	k, v [][]float32 // per block: [pos][kv width]
	n    int
}

// NewCache is an empty cache for m.
func (m *Model) NewCache() *Cache {
	return &Cache{k: make([][]float32, m.Shape.Blocks), v: make([][]float32, m.Shape.Blocks)}
}

// Len is how many positions the cache holds.
func (c *Cache) Len() int { return c.n }

// Forward runs ids at the positions after the cache's and returns the
// next-token logits after the last one (the cache grows by len(ids)).
func (m *Model) Forward(ids []int32, c *Cache) ([]float32, error) {
	s := m.Shape
	var x []float32
	for _, id := range ids {
		if id < 0 || int(id) >= s.Vocab {
			return nil, fmt.Errorf("token id %d outside the vocabulary of %d", id, s.Vocab)
		}
		x = m.step(id, c)
	}
	if x == nil {
		return nil, fmt.Errorf("no tokens")
	}
	rmsNorm(x, m.norm, s.NormEps)
	logits := make([]float32, s.Vocab)
	matVec(logits, m.output, x)
	return logits, nil
}

// step runs one token at position c.n through the blocks and returns the
// last hidden state.
func (m *Model) step(id int32, c *Cache) []float32 {
	s := m.Shape
	w, hd := s.Width, s.Width/s.Heads
	kvw := s.KVHeads * hd
	pos := c.n
	x := append([]float32(nil), m.embed[int(id)*w:(int(id)+1)*w]...)
	h := make([]float32, w)
	q := make([]float32, w)
	att := make([]float32, w)
	out := make([]float32, w)
	gate := make([]float32, s.FeedForward)
	up := make([]float32, s.FeedForward)
	for i := range m.blocks {
		b := &m.blocks[i]
		copy(h, x)
		rmsNorm(h, b.attnNorm, s.NormEps)
		k := make([]float32, kvw)
		v := make([]float32, kvw)
		matVec(q, b.q, h)
		matVec(k, b.k, h)
		matVec(v, b.v, h)
		rope(q, s.Heads, hd, pos, s.RopeBase)
		rope(k, s.KVHeads, hd, pos, s.RopeBase)
		c.k[i] = append(c.k[i], k...)
		c.v[i] = append(c.v[i], v...)
		attend(att, q, c.k[i], c.v[i], s.Heads, s.KVHeads, hd, pos+1)
		matVec(out, b.o, att)
		for j := range x {
			x[j] += out[j]
		}
		copy(h, x)
		rmsNorm(h, b.ffnNorm, s.NormEps)
		matVec(gate, b.gate, h)
		matVec(up, b.up, h)
		for j := range gate {
			g := gate[j]
			gate[j] = g / (1 + float32(math.Exp(float64(-g)))) * up[j]
		}
		matVec(out, b.down, gate)
		for j := range x {
			x[j] += out[j]
		}
	}
	c.n++
	return x
}

// rmsNorm scales x to unit root mean square, times weight.
func rmsNorm(x, weight []float32, eps float64) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+eps))
	for i := range x {
		x[i] *= scale * weight[i]
	}
}

// rope rotates each head's adjacent pairs (x[2i], x[2i+1]) by pos·θ_i,
// θ_i = base^(−2i/headDim).
func rope(x []float32, heads, hd, pos int, base float64) {
	for h := range heads {
		v := x[h*hd : (h+1)*hd]
		for i := 0; i < hd; i += 2 {
			theta := float64(pos) * math.Pow(base, -float64(i)/float64(hd))
			cos, sin := float32(math.Cos(theta)), float32(math.Sin(theta))
			a, b := v[i], v[i+1]
			v[i], v[i+1] = a*cos-b*sin, a*sin+b*cos
		}
	}
}

// attend is causal attention of q (one position) over the cache's n
// positions; query head h reads KV head h/(heads/kvHeads).
func attend(out, q, ks, vs []float32, heads, kvHeads, hd, n int) {
	group := heads / kvHeads
	kvw := kvHeads * hd
	scale := float32(1 / math.Sqrt(float64(hd)))
	scores := make([]float32, n)
	for h := range heads {
		qh := q[h*hd : (h+1)*hd]
		kh := h / group
		maxS := float32(math.Inf(-1))
		for p := range n {
			k := ks[p*kvw+kh*hd : p*kvw+(kh+1)*hd]
			var d float32
			for j := range hd {
				d += qh[j] * k[j]
			}
			scores[p] = d * scale
			maxS = max(maxS, scores[p])
		}
		var sum float32
		for p := range n {
			scores[p] = float32(math.Exp(float64(scores[p] - maxS)))
			sum += scores[p]
		}
		o := out[h*hd : (h+1)*hd]
		clear(o)
		for p := range n {
			wgt := scores[p] / sum
			v := vs[p*kvw+kh*hd : p*kvw+(kh+1)*hd]
			for j := range hd {
				o[j] += wgt * v[j]
			}
		}
	}
}

// matVec is y = W·x for W [len(y)][len(x)], rows split over the CPUs.
func matVec(y, w, x []float32) {
	n := len(x)
	workers := min(runtime.GOMAXPROCS(0), max(1, len(y)/64))
	var wg sync.WaitGroup
	chunk := (len(y) + workers - 1) / workers
	for s := 0; s < len(y); s += chunk {
		e := min(s+chunk, len(y))
		wg.Add(1)
		go func(s, e int) {
			defer wg.Done()
			for r := s; r < e; r++ {
				row := w[r*n : (r+1)*n]
				var acc float32
				for j, v := range row {
					acc += v * x[j]
				}
				y[r] = acc
			}
		}(s, e)
	}
	wg.Wait()
}
