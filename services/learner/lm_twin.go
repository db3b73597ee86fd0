package learner

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/asyncwebrl/asyncwebrl/services/internal/casstore"
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
	shape gguf.Llama
	vs    *nn.VarStore
	p     map[string]*ts.Tensor
	// refP is p with the trainable weights replaced by the reference
	// model's (setReference), which the KL penalty measures the answers
	// against; nil: none.
	refP     map[string]*ts.Tensor
	refOwned []*ts.Tensor // refP's own tensors, freed by close
	cos, sin *ts.Tensor   // [context, head dim/2]
	train    int
	prefix   *twinPrefix // nil until setPrefix
	// prefixGen counts the prefixes set (the first is 1): a frozen output
	// cached after one prefix is no other's.
	prefixGen uint64
	// cache keeps samples' frozen-block outputs between updates (nil: off).
	cache *frozenCache
	// store holds the actors' frozen-block outputs (frozenRef); nil: the
	// twin computes every one. loaded counts the passes whose output came
	// from it, loadFailed those whose blob could not be read, and computed
	// those that ran the frozen blocks.
	store                        *casstore.Store
	loaded, loadFailed, computed int64
	// share turns on, for one scoring pass (lmScore), the trainable
	// blocks' keys and values over the prefix computed once for the pass
	// (shared) rather than once a sample; sharedRef keeps the reference
	// weights' for as long as the prefix and reference hold (they never
	// change otherwise).
	share             bool
	shared, sharedRef *sharedPrefix
	// noShare turns sharing off (every pass runs the trainable blocks
	// over the whole sequence): the baseline of BenchmarkLMStepSmolLM2
	// and TestLMSharedPrefix. sharedRuns counts the shared computations.
	noShare    bool
	sharedRuns int
}

// sharedPrefix is the trainable blocks' rotated keys and values over the
// cached prefix (twinPrefix) under one set of weights. Every sample of a
// batch shares the system message, so its pass through the trainable
// blocks, forward and back, is the same for all of them: computed once, it
// leaves each sample's pass the user message and answer (12-07: of a
// median 461-token prompt, the system message is over half), and the
// gradient, a sum over the samples, is the same.
type sharedPrefix struct {
	gen  uint64
	k, v []*ts.Tensor // a trainable block's [KV, P, hd]
}

func (p *sharedPrefix) drop() {
	if p == nil {
		return
	}
	for i := range p.k {
		_ = p.k[i].Drop()
		_ = p.v[i].Drop()
	}
}

// sharedKV is the trainable blocks' keys and values over the prefix under
// weights p, from *slot when it holds the prefix's, computed into it
// otherwise.
func (t *lmTwin) sharedKV(p map[string]*ts.Tensor, slot **sharedPrefix) (*sharedPrefix, error) {
	if sp := *slot; sp != nil && sp.gen == t.prefixGen {
		return sp, nil
	}
	(*slot).drop()
	*slot = nil
	t.sharedRuns++
	s := &scope{}
	_, k, v := t.blocks(s, p, t.prefix.h, t.frozen(), t.shape.Blocks, 0, nil, nil, true)
	if err := s.finish(append(slices.Clone(k), v...)...); err != nil {
		return nil, fmt.Errorf("unable to run the trainable blocks over the prompt prefix: %w", err)
	}
	*slot = &sharedPrefix{gen: t.prefixGen, k: k, v: v}
	return *slot, nil
}

// endPass ends a scoring pass's sharing: the policy weights' shared keys
// and values are let go (the graph a backward pass needs keeps its own
// hold of them), since the next optimiser step makes them stale.
func (t *lmTwin) endPass() {
	t.share = false
	t.shared.drop()
	t.shared = nil
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
func (t *lmTwin) trainable(name string) bool { return lmTrainable(t.shape.Blocks, t.train, name) }

// lmTrainable reports whether weight name of a model of blocks blocks is
// one the learner trains when it trains the top train blocks.
func lmTrainable(blocks, train int, name string) bool {
	if name == "output_norm" {
		return train > 0
	}
	for i := blocks - train; i < blocks; i++ {
		if strings.HasPrefix(name, "blk"+strconv.Itoa(i)+".") {
			return true
		}
	}
	return false
}

// twinPrefix is a head every prompt shares (the system message) run
// through the frozen blocks once: their rotated keys and values, which the
// rest of a sequence attends to, and their output, the trainable blocks'
// input. The frozen blocks never change, so neither does this; it cuts a
// learner's pass on SmolLM2 from the whole prompt to the user message.
type twinPrefix struct {
	ids  []int32
	k, v []*ts.Tensor // a frozen block's [KV, P, hd]
	h    *ts.Tensor   // [P, W]
}

func (p *twinPrefix) drop() {
	for i := range p.k {
		_ = p.k[i].Drop()
		_ = p.v[i].Drop()
	}
	if p.h != nil {
		_ = p.h.Drop()
	}
}

// matches reports whether ids begin with the prefix (and go past it).
func (p *twinPrefix) matches(ids []int32) bool {
	if p == nil || len(ids) <= len(p.ids) {
		return false
	}
	for i, id := range p.ids {
		if ids[i] != id {
			return false
		}
	}
	return true
}

// frozen is the number of blocks that do not learn.
func (t *lmTwin) frozen() int { return t.shape.Blocks - t.train }

// setPrefix caches ids (a system message's tokens) through the frozen
// blocks; logits then starts every sequence that begins with them after
// them. Setting the prefix it already holds costs nothing.
func (t *lmTwin) setPrefix(ids []int32) error {
	if t.prefix != nil && slices.Equal(t.prefix.ids, ids) {
		return nil
	}
	if len(ids) == 0 || len(ids) >= t.shape.Context {
		return fmt.Errorf("unable to cache a prefix of %d tokens (context %d)", len(ids), t.shape.Context)
	}
	s := &scope{}
	x, err := t.embed(s, ids)
	if err != nil {
		return err
	}
	p := &twinPrefix{ids: slices.Clone(ids)}
	p.h, p.k, p.v = t.blocks(s, t.p, x, 0, t.frozen(), 0, nil, nil, true)
	keep := append([]*ts.Tensor{p.h}, append(slices.Clone(p.k), p.v...)...)
	if err := s.finish(keep...); err != nil {
		return fmt.Errorf("unable to cache the prompt prefix: %w", err)
	}
	if t.prefix != nil {
		t.prefix.drop()
	}
	t.prefix = p
	t.prefixGen++
	return nil
}

// embed is ids' embedding rows [T, W].
func (t *lmTwin) embed(s *scope, ids []int32) (*ts.Tensor, error) {
	idx := make([]int64, len(ids))
	for i, id := range ids {
		if id < 0 || int(id) >= t.shape.Vocab {
			return nil, fmt.Errorf("token id %d outside the vocabulary of %d", id, t.shape.Vocab)
		}
		idx[i] = int64(id)
	}
	ix := s.keep(int64Tensor(idx, int64(len(ids))))
	return s.embedding(t.p["embed"], ix), s.err
}

// causalMask is the additive mask [S, past+S] of S positions after past
// cached ones: −1e9 where a key lies after its query.
func (s *scope) causalMask(S, past int64) *ts.Tensor {
	n := past + S
	m := make([]float32, S*n)
	for q := range S {
		for k := past + q + 1; k < n; k++ {
			m[q*n+k] = -1e9
		}
	}
	return s.keep(float32Tensor(m, S, n))
}

// blocks runs x [S, W], at positions pos0.., through blocks [lo, hi) with
// weights p (the twin's, or the reference's: refP), attending also to past
// keys and values (one per block, or none). With keep it returns each
// block's keys and values as well (the positions of x only).
func (t *lmTwin) blocks(s *scope, p map[string]*ts.Tensor, x *ts.Tensor, lo, hi int, pos0 int64, pastK, pastV []*ts.Tensor, keep bool) (*ts.Tensor, []*ts.Tensor, []*ts.Tensor) {
	sh := t.shape
	if !s.ok(x) {
		return nil, nil, nil
	}
	S := x.MustSize()[0]
	W, H, KV := int64(sh.Width), int64(sh.Heads), int64(sh.KVHeads)
	hd := W / H
	group := H / KV
	var past int64
	if len(pastK) > 0 {
		past = pastK[0].MustSize()[1]
	}
	mask := s.causalMask(S, past)
	cos := s.reshape(s.narrow(t.cos, 0, pos0, S), S, 1, hd/2, 1)
	sin := s.reshape(s.narrow(t.sin, 0, pos0, S), S, 1, hd/2, 1)
	eps := s.scalarTensor(sh.NormEps)
	rms := func(x, w *ts.Tensor) *ts.Tensor { return s.rmsNorm(x, w, eps) }
	proj := func(x, w *ts.Tensor) *ts.Tensor { return s.matmul(x, s.transpose(w, 0, 1)) }
	rope := func(x *ts.Tensor, nh int64) *ts.Tensor { // [S, nh·hd] → [S, nh, hd] rotated
		x = s.reshape(x, S, nh, hd/2, 2)
		x0, x1 := s.narrow(x, 3, 0, 1), s.narrow(x, 3, 1, 1)
		r0 := s.sub(s.mul(x0, cos), s.mul(x1, sin))
		r1 := s.add(s.mul(x0, sin), s.mul(x1, cos))
		return s.reshape(s.cat(3, r0, r1), S, nh, hd)
	}
	var ks, vs []*ts.Tensor
	for i := lo; i < hi; i++ {
		b := "blk" + strconv.Itoa(i) + "."
		h := rms(x, p[b+"attn_norm"])
		q := s.reshape(s.transpose(rope(proj(h, p[b+"q"]), H), 0, 1), KV, group, S, hd) // [KV, group, S, hd]
		k := s.transpose(rope(proj(h, p[b+"k"]), KV), 0, 1)                             // [KV, S, hd]
		v := s.transpose(s.reshape(proj(h, p[b+"v"]), S, KV, hd), 0, 1)                 // [KV, S, hd]
		if keep {
			ks, vs = append(ks, k), append(vs, v)
		}
		if past > 0 {
			k = s.cat(1, pastK[i-lo], k)
			v = s.cat(1, pastV[i-lo], v)
		}
		n := past + S
		k4 := s.transpose(s.reshape(k, KV, 1, n, hd), 2, 3) // [KV, 1, hd, n]
		scores := s.add(s.mulScalar(s.matmul(q, k4), 1/math.Sqrt(float64(hd))), mask)
		att := s.matmul(s.softmax(scores), s.reshape(v, KV, 1, n, hd))     // [KV, group, S, hd]
		att = s.reshape(s.transpose(s.reshape(att, H, S, hd), 0, 1), S, W) // [S, W]
		x = s.add(x, proj(att, p[b+"o"]))
		h = rms(x, p[b+"ffn_norm"])
		act := s.mul(s.silu(proj(h, p[b+"gate"])), proj(h, p[b+"up"]))
		x = s.add(x, proj(act, p[b+"down"]))
	}
	return x, ks, vs
}

// logits is the next-token logits [T-from, vocab] after each of ids from
// position from on. The frozen blocks run in a scope of their own (their
// activations are no gradient's business) over ids past the cached prefix
// when ids begin with it (setPrefix), over all of ids otherwise; the
// trainable blocks run over all of ids; the output projection, 28M
// multiply-adds a position for SmolLM2, only where asked. With a slot and
// the twin's frozen cache, the frozen blocks' output is kept in the cache
// and taken from it on the slot's next pass over the same ids; on a miss,
// a slot whose actor kept the output (frozenRef) reads it from the store
// rather than running the frozen blocks (lm_frozen.go).
func (t *lmTwin) logits(ids []int32, from int, slot *frozenSlot) (*ts.Tensor, error) {
	var shared **sharedPrefix
	if t.share {
		shared = &t.shared
	}
	return t.logitsWith(t.p, shared, ids, from, slot)
}

// refLogits is logits under the reference weights (refP): the base
// model's trained blocks and output norm over the same frozen output. The
// result carries no graph (no reference weight wants a gradient).
func (t *lmTwin) refLogits(ids []int32, from int, slot *frozenSlot) (*ts.Tensor, error) {
	if t.refP == nil {
		return nil, fmt.Errorf("unable to run the reference model: the twin has none")
	}
	return t.logitsWith(t.refP, &t.sharedRef, ids, from, slot)
}

// logitsWith is logits with the trained blocks' and output norm's weights
// from p, their keys and values over the prefix kept in *shared unless
// shared is nil (logits: outside a scoring pass; refLogits always shares,
// the reference's weights do not change).
func (t *lmTwin) logitsWith(p map[string]*ts.Tensor, shared **sharedPrefix, ids []int32, from int, slot *frozenSlot) (*ts.Tensor, error) {
	sh := t.shape
	T := int64(len(ids))
	if T == 0 || T > int64(sh.Context) || from < 0 || int64(from) >= T {
		return nil, fmt.Errorf("unable to run the language model twin on %d tokens from %d (context %d)", T, from, sh.Context)
	}
	var pastK, pastV []*ts.Tensor
	var head *ts.Tensor
	rest := ids
	var gen uint64
	if t.prefix.matches(ids) {
		pastK, pastV, head = t.prefix.k, t.prefix.v, t.prefix.h
		rest = ids[len(t.prefix.ids):]
		gen = t.prefixGen
	}
	s := &scope{}
	size := int64(len(rest)) * int64(sh.Width) * 4
	x := t.cache.get(slot, len(rest), gen)
	if x == nil {
		if slot != nil && slot.ref != nil {
			var err error
			if x, err = t.load(slot.ref, len(rest), gen > 0); err != nil {
				t.loadFailed++
				x = nil
			} else if x != nil {
				t.loaded++
			}
		}
		if x == nil {
			t.computed++
			fs := &scope{}
			var err error
			if x, err = t.embed(fs, rest); err != nil {
				_ = fs.finish()
				return nil, err
			}
			x, _, _ = t.blocks(fs, t.p, x, 0, t.frozen(), T-int64(len(rest)), pastK, pastV, false)
			if err := fs.finish(x); err != nil {
				return nil, fmt.Errorf("unable to run the language model twin's frozen blocks: %w", err)
			}
		}
		if !t.cache.put(slot, x, len(rest), gen, size) {
			s.tmp = append(s.tmp, x)
		}
	}
	// rows is the number of positions x holds, the last of ids' the last.
	rows := T
	if P := T - int64(len(rest)); head != nil && int64(from) >= P && shared != nil && !t.noShare {
		sp, err := t.sharedKV(p, shared)
		if err != nil {
			_ = s.finish()
			return nil, err
		}
		x, _, _ = t.blocks(s, p, x, t.frozen(), sh.Blocks, P, sp.k, sp.v, false)
		rows = T - P
	} else {
		if head != nil {
			x = s.cat(0, head, x)
		}
		x, _, _ = t.blocks(s, p, x, t.frozen(), sh.Blocks, 0, nil, nil, false)
	}
	out := p["embed"]
	if o, ok := p["output"]; ok {
		out = o
	}
	if skip := int64(from) - (T - rows); skip > 0 {
		x = s.narrow(x, 0, skip, T-int64(from))
	}
	h := s.rmsNorm(x, p["output_norm"], s.scalarTensor(sh.NormEps))
	logits := s.matmul(h, s.transpose(out, 0, 1))
	if err := s.finish(logits); err != nil {
		return nil, fmt.Errorf("unable to run the language model twin: %w", err)
	}
	return logits, nil
}

// rmsNorm is x scaled by w over the root mean square of its last
// dimension (eps a one-element tensor: scalarTensor).
func (s *scope) rmsNorm(x, w, eps *ts.Tensor) *ts.Tensor {
	return s.mul(s.mul(x, s.rsqrt(s.add(s.meanLast(s.mul(x, x)), eps))), w)
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

// setReference makes ref's trainable weights (the top blocks and output
// norm of a model of the twin's shape) the reference the KL penalty
// measures against: copies, which no optimiser step moves.
func (t *lmTwin) setReference(ref *llama.Model) error {
	if ref.Shape != t.shape {
		return fmt.Errorf("unable to set the reference model: its shape %v is not the twin's %v", ref.Shape, t.shape)
	}
	refP := maps.Clone(t.p)
	var owned []*ts.Tensor
	for _, w := range ref.Tensors() {
		if !t.trainable(w.Name) {
			continue
		}
		x, err := float32Tensor(w.Data, w.Shape...)
		if err != nil {
			for _, o := range owned {
				_ = o.Drop()
			}
			return fmt.Errorf("unable to load reference weight %q: %w", w.Name, err)
		}
		refP[w.Name] = x
		owned = append(owned, x)
	}
	t.dropReference()
	t.refP, t.refOwned = refP, owned
	return nil
}

// dropReference frees the reference's own tensors (the rest are p's).
func (t *lmTwin) dropReference() {
	for _, o := range t.refOwned {
		_ = o.Drop()
	}
	t.refP, t.refOwned = nil, nil
	t.sharedRef.drop()
	t.sharedRef = nil
}

// close frees the twin's weights.
func (t *lmTwin) close() {
	t.cache.clear()
	t.endPass()
	t.dropReference()
	t.vs.Destroy()
	if t.prefix != nil {
		t.prefix.drop()
	}
	_ = t.cos.Drop()
	_ = t.sin.Drop()
}
