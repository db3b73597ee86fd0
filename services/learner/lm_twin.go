package learner

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
)

// lmTwin is the gotch twin of services/lm/llama: Forward's ops on the same
// named weights (llama.Model.Tensors), for a whole sequence in one pass
// (training scores a prompt and its answer at once). The top train blocks
// and the output norm are trainable; the rest is frozen, so a published
// version is those blocks alone. lm_twin_test.go holds it to the Go
// reference.
//
// All methods must run on a torch thread (onTorchThread).
type lmTwin struct {
	shape    gguf.Llama
	vs       *nn.VarStore
	p        map[string]*ts.Tensor
	cos, sin *ts.Tensor // [context, head dim/2]
	train    int
}

// newLMTwin copies m's weights into a VarStore, the top train blocks (and
// the output norm) trainable.
func newLMTwin(m *llama.Model, train int) (*lmTwin, error) {
	s := m.Shape
	if train < 0 || train > s.Blocks {
		return nil, fmt.Errorf("unable to build the language model twin: %d trainable blocks of %d", train, s.Blocks)
	}
	t := &lmTwin{shape: s, vs: nn.NewVarStore(gotch.CPU), p: map[string]*ts.Tensor{}, train: train}
	for _, w := range m.Tensors() {
		x, err := float32Tensor(w.Data, w.Shape...)
		if err != nil {
			t.vs.Destroy()
			return nil, fmt.Errorf("unable to load weight %q: %w", w.Name, err)
		}
		// gotch's variable names take no dots (its path separator).
		v, err := t.vs.Root().Add(strings.ReplaceAll(w.Name, ".", "_"), x, t.trainable(w.Name))
		if err != nil {
			t.vs.Destroy()
			return nil, fmt.Errorf("unable to add weight %q: %w", w.Name, err)
		}
		t.p[w.Name] = v
	}
	hd := s.Width / s.Heads
	cos, sin := llama.RopeTables(s.Context, hd, s.RopeBase)
	var err error
	if t.cos, err = float32Tensor(cos, int64(s.Context), int64(hd/2)); err != nil {
		return nil, err
	}
	if t.sin, err = float32Tensor(sin, int64(s.Context), int64(hd/2)); err != nil {
		return nil, err
	}
	return t, nil
}

// trainable: the top blocks' weights and the output norm.
func (t *lmTwin) trainable(name string) bool {
	if name == "output_norm" {
		return t.train > 0
	}
	for i := t.shape.Blocks - t.train; i < t.shape.Blocks; i++ {
		if strings.HasPrefix(name, "blk"+strconv.Itoa(i)+".") {
			return true
		}
	}
	return false
}

// logits is the next-token logits [T-from, vocab] after each of ids from
// position from on (the blocks run over all of ids; the output
// projection, 28M multiply-adds a position for SmolLM2, only where asked).
func (t *lmTwin) logits(ids []int32, from int) (*ts.Tensor, error) {
	sh := t.shape
	T := int64(len(ids))
	if T == 0 || T > int64(sh.Context) || from < 0 || int64(from) >= T {
		return nil, fmt.Errorf("unable to run the language model twin on %d tokens from %d (context %d)", T, from, sh.Context)
	}
	W, H, KV := int64(sh.Width), int64(sh.Heads), int64(sh.KVHeads)
	hd := W / H
	group := H / KV
	idx := make([]int64, T)
	for i, id := range ids {
		if id < 0 || int(id) >= sh.Vocab {
			return nil, fmt.Errorf("token id %d outside the vocabulary of %d", id, sh.Vocab)
		}
		idx[i] = int64(id)
	}
	ix, err := int64Tensor(idx, T)
	if err != nil {
		return nil, err
	}
	defer ix.Drop()
	// The causal mask: −1e9 above the diagonal.
	m := make([]float32, T*T)
	for q := range T {
		for k := q + 1; k < T; k++ {
			m[q*T+k] = -1e9
		}
	}
	mask, err := float32Tensor(m, T, T)
	if err != nil {
		return nil, err
	}
	defer mask.Drop()

	s := &scope{}
	p := t.p
	cos := s.reshape(s.narrow(t.cos, 0, 0, T), T, 1, hd/2, 1)
	sin := s.reshape(s.narrow(t.sin, 0, 0, T), T, 1, hd/2, 1)
	eps := s.scalarTensor(sh.NormEps)
	rms := func(x, w *ts.Tensor) *ts.Tensor {
		ms := s.meanLast(s.mul(x, x))
		return s.mul(s.mul(x, s.rsqrt(s.add(ms, eps))), w)
	}
	proj := func(x, w *ts.Tensor) *ts.Tensor { return s.matmul(x, s.transpose(w, 0, 1)) }
	rope := func(x *ts.Tensor, nh int64) *ts.Tensor { // [T, nh·hd] → [T, nh, hd] rotated
		x = s.reshape(x, T, nh, hd/2, 2)
		x0, x1 := s.narrow(x, 3, 0, 1), s.narrow(x, 3, 1, 1)
		r0 := s.sub(s.mul(x0, cos), s.mul(x1, sin))
		r1 := s.add(s.mul(x0, sin), s.mul(x1, cos))
		return s.reshape(s.cat(3, r0, r1), T, nh, hd)
	}
	x := s.embedding(p["embed"], ix)
	for i := range sh.Blocks {
		b := "blk" + strconv.Itoa(i) + "."
		h := rms(x, p[b+"attn_norm"])
		q := s.reshape(s.transpose(rope(proj(h, p[b+"q"]), H), 0, 1), KV, group, T, hd) // [KV, group, T, hd]
		k := s.transpose(rope(proj(h, p[b+"k"]), KV), 0, 1)                             // [KV, T, hd]
		v := s.transpose(s.reshape(proj(h, p[b+"v"]), T, KV, hd), 0, 1)                 // [KV, T, hd]
		k4 := s.transpose(s.reshape(k, KV, 1, T, hd), 2, 3)                             // [KV, 1, hd, T]
		scores := s.add(s.mulScalar(s.matmul(q, k4), 1/math.Sqrt(float64(hd))), mask)
		probs := s.softmax(scores)
		att := s.matmul(probs, s.reshape(v, KV, 1, T, hd))                 // [KV, group, T, hd]
		att = s.reshape(s.transpose(s.reshape(att, H, T, hd), 0, 1), T, W) // [T, W]
		x = s.add(x, proj(att, p[b+"o"]))
		h = rms(x, p[b+"ffn_norm"])
		gate := proj(h, p[b+"gate"])
		act := s.mul(s.silu(gate), proj(h, p[b+"up"]))
		x = s.add(x, proj(act, p[b+"down"]))
	}
	out := p["embed"]
	if o, ok := p["output"]; ok {
		out = o
	}
	if from > 0 {
		x = s.narrow(x, 0, int64(from), T-int64(from))
	}
	logits := proj(rms(x, p["output_norm"]), out)
	if err := s.finish(logits); err != nil {
		return nil, fmt.Errorf("unable to run the language model twin: %w", err)
	}
	return logits, nil
}

// scalarTensor is a one-element float32 tensor (a constant of the graph,
// broadcast).
func (s *scope) scalarTensor(v float64) *ts.Tensor {
	if s.err != nil {
		return nil
	}
	t, err := float32Tensor([]float32{float32(v)}, 1)
	return s.keep(t, err)
}

func (s *scope) meanLast(x *ts.Tensor) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.MeanDim([]int64{-1}, true, gotch.Float, false))
}

func (s *scope) rsqrt(x *ts.Tensor) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.Rsqrt(false))
}

func (s *scope) softmax(x *ts.Tensor) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.Softmax(-1, gotch.Float, false))
}

func (s *scope) silu(x *ts.Tensor) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.Silu(false))
}

// close frees the twin's weights.
func (t *lmTwin) close() {
	t.vs.Destroy()
	_ = t.cos.Drop()
	_ = t.sin.Drop()
}
