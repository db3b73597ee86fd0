package learner

import (
	"fmt"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/nn"
	"github.com/sugarme/gotch/ts"

	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// policyModel is the gotch twin of the ONNX graph that services/policy
// writes (policy.Architecture.buildGraph): the same ops on the same named
// parameters, so weights trained here serve unchanged in ONNX Runtime.
// Change both together; parity_test.go holds them to 1e-4.
//
// All methods must run on a torch thread (onTorchThread).
type policyModel struct {
	// arch: the network for a fresh start (default
	// policy.DefaultArchitecture); published weights and checkpoints carry
	// their own.
	arch   policy.Architecture
	vs     *nn.VarStore
	params map[string]*ts.Tensor
}

// modelInputs are a policy.Batch as tensors, keyed by graph input name.
type modelInputs map[string]*ts.Tensor

// modelOutputs are the network outputs: typeLogits [B,A], elemLogits
// [B,A,E], candLogits [B,E+2,K] (all with the additive masks applied),
// value [B,1], pointLogits [B,A+1,G] and pointOffsets [B,G,S²].
type modelOutputs struct {
	typeLogits, elemLogits, candLogits, value, pointLogits, pointOffsets *ts.Tensor
}

// newPolicyModel creates trainable variables holding params (which must
// match arch: policy.Architecture.CheckParams).
func newPolicyModel(arch policy.Architecture, params policy.Params) (*policyModel, error) {
	if err := arch.Validate(); err != nil {
		return nil, err
	}
	if err := arch.CheckParams(params); err != nil {
		return nil, err
	}
	vs := nn.NewVarStore(gotch.CPU)
	m := &policyModel{arch: arch, vs: vs, params: make(map[string]*ts.Tensor, len(params))}
	for _, p := range params {
		t, err := float32Tensor(p.Data, p.Shape...)
		if err != nil {
			vs.Destroy()
			return nil, fmt.Errorf("unable to load parameter %q: %w", p.Name, err)
		}
		v, err := vs.Root().Add(p.Name, t, true)
		if err != nil {
			vs.Destroy()
			return nil, fmt.Errorf("unable to add parameter %q: %w", p.Name, err)
		}
		m.params[p.Name] = v
	}
	return m, nil
}

// exportParams copies the current parameter values out, in the
// architecture's canonical order, ready for policy.WriteONNX.
func (m *policyModel) exportParams() (policy.Params, error) {
	specs := m.arch.ParamSpecs()
	out := make(policy.Params, 0, len(specs))
	for _, s := range specs {
		t, ok := m.params[s.Name]
		if !ok {
			return nil, fmt.Errorf("unable to export parameter %q: missing", s.Name)
		}
		data, err := float32Values(t)
		if err != nil {
			return nil, fmt.Errorf("unable to export parameter %q: %w", s.Name, err)
		}
		out = append(out, policy.Param{Name: s.Name, Shape: append([]int64(nil), s.Shape...), Data: data})
	}
	return out, m.arch.CheckParams(out)
}

// close frees the variables.
func (m *policyModel) close() { m.vs.Destroy() }

// batchInputs turns a stacked batch into tensors.
func batchInputs(b *policy.Batch) (modelInputs, error) {
	in := make(modelInputs, len(b.Inputs))
	for _, x := range b.Inputs {
		var t *ts.Tensor
		var err error
		if x.I64 != nil {
			t, err = int64Tensor(x.I64, x.Shape...)
		} else {
			t, err = float32Tensor(x.F32, x.Shape...)
		}
		if err != nil {
			return nil, fmt.Errorf("unable to build input %q: %w", x.Name, err)
		}
		in[x.Name] = t
	}
	return in, nil
}

// forward computes the outputs. It mirrors policy's buildGraph op for op.
func (m *policyModel) forward(in modelInputs) (*modelOutputs, error) {
	a := &m.arch
	for _, s := range a.InputSpecs() {
		if in[s.Name] == nil {
			return nil, fmt.Errorf("unable to run the policy: input %q is missing", s.Name)
		}
	}
	E, K := int64(a.MaxElements), int64(a.MaxCandidates)
	D, Hd := int64(a.EmbedDim), int64(a.Hidden)
	oh, ow := a.ConvOut()
	s := &scope{}
	p := m.params

	conv := func(x *ts.Tensor, name string) *ts.Tensor {
		return s.relu(s.conv2d(x, p[name+"_w"], p[name+"_b"]))
	}
	linear := func(x *ts.Tensor, name string) *ts.Tensor {
		return s.add(s.matmul(x, p[name+"_w"]), p[name+"_b"])
	}
	bagOfWords := func(tokens, weights *ts.Tensor, dims ...int64) *ts.Tensor {
		emb := s.embedding(p["embed"], tokens)
		w := s.reshape(weights, append(append([]int64{-1}, dims...), 1)...)
		return s.sum(s.mul(emb, w), int64(len(dims)))
	}

	fmap := conv(conv(in[policy.InFrame], "conv1"), "conv2")
	v := s.reshape(fmap, -1, int64(a.Conv2Channels*oh*ow))
	vis := s.relu(linear(v, "vis"))

	inst := bagOfWords(in[policy.InInstrTokens], in[policy.InInstrWeights], int64(a.MaxInstrTokens))
	inst3 := s.reshape(inst, -1, 1, D)
	ctx := s.relu(linear(s.cat(1, inst, vis), "ctx"))

	elEmb := bagOfWords(in[policy.InElemTokens], in[policy.InElemTokWeights], E, int64(a.ElemTokens))
	elIn := s.cat(2, in[policy.InElemFeats], elEmb, s.mul(elEmb, inst3))
	e1 := s.relu(linear(elIn, "el1"))
	ctxE := s.reshape(s.matmul(ctx, p["elctx_w"]), -1, 1, Hd)
	e2 := s.relu(s.add(s.add(s.matmul(e1, p["el2_w"]), ctxE), p["el2_b"]))
	pooled := s.sum(s.mul(e2, s.reshape(in[policy.InElemWeights], -1, E, 1)), 1)
	glob := s.relu(linear(s.cat(1, ctx, pooled), "glob"))

	typeLogits := s.add(linear(glob, "type"), s.additiveMask(in[policy.InTypeMask]))
	ptr := s.transpose(linear(e2, "ptr"), 1, 2)
	elemLogits := s.add(ptr, s.additiveMask(in[policy.InElemTypeMask]))

	cEmb := bagOfWords(in[policy.InCandTokens], in[policy.InCandTokWeights], K, int64(a.CandTokens))
	cIn := s.cat(2, in[policy.InCandFeats], cEmb, s.mul(cEmb, inst3))
	c1 := s.relu(linear(cIn, "c1"))
	cg := s.reshape(s.matmul(glob, p["cglob_w"]), -1, 1, Hd)
	c2 := s.relu(s.add(s.add(s.matmul(c1, p["c2_w"]), cg), p["c2_b"]))
	rowsE := linear(e2, "q")
	rowG := s.reshape(linear(glob, "gq"), -1, 1, Hd)
	rowK := s.reshape(linear(glob, "kq"), -1, 1, Hd) // the key row
	rows := s.cat(1, rowsE, rowG, rowK)
	bil := s.matmul(rows, s.transpose(c2, 1, 2))
	un := s.reshape(linear(c2, "u"), -1, 1, K)
	R := int64(a.TextRows())
	pair := s.reshape(s.matmul(in[policy.InPairFeats], p["pair_w"]), -1, R, K)
	candMask := s.reshape(s.additiveMask(in[policy.InCandMask]), -1, R, K)
	candLogits := s.add(s.add(s.add(bil, un), pair), candMask)

	value := linear(glob, "v")

	G := int64(a.Cells())
	cells := s.transpose(s.reshape(fmap, -1, int64(a.Conv2Channels), G), 1, 2)
	under := s.matmul(in[policy.InCellElems], s.matmul(e2, p["cellel_w"]))
	cg2 := s.reshape(s.matmul(glob, p["cellglob_w"]), -1, 1, int64(a.PointHidden))
	ch := s.relu(s.add(s.add(s.add(s.add(s.matmul(cells, p["cell_w"]), p["cellpos"]), under), cg2), p["cell_b"]))
	pointLogits := s.transpose(linear(ch, "pt"), 1, 2)
	pointOffsets := linear(ch, "off")

	out := &modelOutputs{typeLogits: typeLogits, elemLogits: elemLogits, candLogits: candLogits, value: value,
		pointLogits: pointLogits, pointOffsets: pointOffsets}
	if err := s.finish(out.typeLogits, out.elemLogits, out.candLogits, out.value, out.pointLogits, out.pointOffsets); err != nil {
		return nil, fmt.Errorf("unable to run the policy: %w", err)
	}
	return out, nil
}

// scope runs a chain of torch ops, stopping at the first error, and
// remembers the intermediate tensors so that finish can free them: libtorch
// memory is invisible to Go's GC, and autograd keeps its own references, so
// dropping the Go handles early is safe.
type scope struct {
	tmp []*ts.Tensor
	err error
}

func (s *scope) keep(t *ts.Tensor, err error) *ts.Tensor {
	if err != nil {
		s.err = err
		return nil
	}
	s.tmp = append(s.tmp, t)
	return t
}

// ok reports whether the chain is still good and all operands exist.
func (s *scope) ok(xs ...*ts.Tensor) bool {
	if s.err != nil {
		return false
	}
	for _, x := range xs {
		if x == nil {
			s.err = fmt.Errorf("missing operand")
			return false
		}
	}
	return true
}

// finish frees every intermediate except keep, or all of them on error.
func (s *scope) finish(keep ...*ts.Tensor) error {
	kept := map[*ts.Tensor]bool{}
	if s.err == nil {
		for _, k := range keep {
			kept[k] = true
		}
	}
	for _, t := range s.tmp {
		if !kept[t] {
			_ = t.Drop() // best effort: the finalizer frees it otherwise
		}
	}
	s.tmp = nil
	return s.err
}

func (s *scope) conv2d(x, w, b *ts.Tensor) *ts.Tensor {
	if !s.ok(x, w, b) {
		return nil
	}
	return s.keep(ts.Conv2d(x, w, b, []int64{2, 2}, []int64{1, 1}, []int64{1, 1}, 1))
}

func (s *scope) relu(x *ts.Tensor) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.Relu(false))
}

func (s *scope) matmul(x, y *ts.Tensor) *ts.Tensor {
	if !s.ok(x, y) {
		return nil
	}
	return s.keep(x.Matmul(y, false))
}

func (s *scope) add(x, y *ts.Tensor) *ts.Tensor {
	if !s.ok(x, y) {
		return nil
	}
	return s.keep(x.Add(y, false))
}

func (s *scope) mul(x, y *ts.Tensor) *ts.Tensor {
	if !s.ok(x, y) {
		return nil
	}
	return s.keep(x.Mul(y, false))
}

func (s *scope) reshape(x *ts.Tensor, shape ...int64) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.Reshape(shape, false))
}

func (s *scope) transpose(x *ts.Tensor, d0, d1 int64) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.Transpose(d0, d1, false))
}

func (s *scope) sum(x *ts.Tensor, dim int64) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.SumDimIntlist([]int64{dim}, false, gotch.Float, false))
}

func (s *scope) cat(dim int64, xs ...*ts.Tensor) *ts.Tensor {
	if !s.ok(xs...) {
		return nil
	}
	return s.keep(ts.Cat(xs, dim))
}

func (s *scope) embedding(w, idx *ts.Tensor) *ts.Tensor {
	if !s.ok(w, idx) {
		return nil
	}
	return s.keep(ts.Embedding(w, idx, -1, false, false))
}

// additiveMask is mask·1e9 - 1e9, as in the ONNX graph.
func (s *scope) additiveMask(mask *ts.Tensor) *ts.Tensor {
	if !s.ok(mask) {
		return nil
	}
	scaled := s.mulScalar(mask, 1e9)
	if !s.ok(scaled) {
		return nil
	}
	return s.keep(withScalar(-1e9, func(sc *ts.Scalar) (*ts.Tensor, error) {
		return scaled.AddScalar(sc, false)
	}))
}

// float32Values copies a float32 tensor's values, row-major, out of the
// autograd graph.
func float32Values(t *ts.Tensor) ([]float32, error) {
	d, err := t.Detach(false)
	if err != nil {
		return nil, fmt.Errorf("unable to detach tensor: %w", err)
	}
	defer d.Drop()
	if d.DType() != gotch.Float {
		return nil, fmt.Errorf("unable to copy tensor values: dtype %v, want float32", d.DType())
	}
	n := d.Numel()
	out := make([]float32, n)
	if n == 0 {
		return out, nil
	}
	if err := d.CopyData(out, n); err != nil {
		return nil, fmt.Errorf("unable to copy tensor values: %w", err)
	}
	return out, nil
}
