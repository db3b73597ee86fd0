package llama

import (
	"fmt"
	"math"
	"strconv"

	"github.com/asyncwebrl/asyncwebrl/services/internal/onnxwire"
)

// The ONNX graph's names: the new tokens, each block's past and present
// keys and values, and the next-token logits.
const (
	InputIDs  = "input_ids"
	OutLogits = "logits"
	// OutHidden is the tapped graph's hidden state after its tap block,
	// [T, width] for the new tokens (ONNXTap).
	OutHidden = "hidden"
)

// PastKey, PastValue, PresentKey and PresentValue name block i's cache
// tensors: [kv heads, positions, head dim], past the input, present the
// output (past and the new tokens').
func PastKey(i int) string      { return "past_key_" + strconv.Itoa(i) }
func PastValue(i int) string    { return "past_value_" + strconv.Itoa(i) }
func PresentKey(i int) string   { return "present_key_" + strconv.Itoa(i) }
func PresentValue(i int) string { return "present_value_" + strconv.Itoa(i) }

// onnxOpset is the graph's opset: LessOrEqual (16) and ReduceMean with its
// axes as an attribute (before 18).
const onnxOpset = 17

// ONNX is the model as an ONNX graph (opset 17) for one sequence, the form
// the actors run on ONNX Runtime:
//
//	input_ids [T] int64, past_key_i / past_value_i [kv heads, P, head dim]
//	→ logits [1, vocab] after the last new token, present_key_i /
//	  present_value_i [kv heads, P+T, head dim]
//
// The new tokens sit at positions P..P+T-1 (P from the past's length), so
// a prompt is one call with empty pasts and each generated token one call
// more. The computation is Forward's, op for op: the same RMSNorm, adjacent-
// pair rotary embedding, grouped-query attention with a causal mask, SwiGLU
// and tied output; weights are stored float32 (the dequantized GGUF) and
// each projection is a Gemm with transB, so the GGUF's [out][in] rows are
// used as stored.
func (m *Model) ONNX() []byte { return m.ONNXTap(0) }

// ONNXTap is ONNX with one more output when tap is in 1..blocks-1:
// OutHidden, the residual stream after the first tap blocks for each new
// token, [T, width]. Why: a learner that trains only the blocks above tap
// needs exactly this for every token the actor read, and the actor has
// computed it anyway; sent with the action it spares the learner the
// frozen blocks' forward (services/learner/lm_frozen.go). tap 0 is ONNX.
func (m *Model) ONNXTap(tap int) []byte {
	s := m.Shape
	w, hd := int64(s.Width), int64(s.Width/s.Heads)
	heads, kvh := int64(s.Heads), int64(s.KVHeads)
	group := heads / kvh
	g := &onnxwire.Graph{}
	md := onnxwire.Model{Name: "llama", Producer: "asyncwebrl", ProducerVersion: "lm/llama", Opset: onnxOpset, Graph: g}
	init := func(name string, shape []int64, data []float32) string {
		md.Initializers = append(md.Initializers, onnxwire.FloatTensor(name, shape, data))
		return name
	}
	embed := init("embed", []int64{int64(s.Vocab), w}, m.embed)
	output := embed
	if &m.output[0] != &m.embed[0] {
		output = init("output", []int64{int64(s.Vocab), w}, m.output)
	}
	cosTab, sinTab := RopeTables(s.Context, int(hd), s.RopeBase)
	cosT := init("rope_cos", []int64{int64(s.Context), hd / 2}, cosTab)
	sinT := init("rope_sin", []int64{int64(s.Context), hd / 2}, sinTab)

	md.Inputs = append(md.Inputs, onnxwire.ValueInfo(InputIDs, onnxwire.DTypeInt64, onnxwire.Sym("seq")))
	md.Outputs = append(md.Outputs, onnxwire.ValueInfo(OutLogits, onnxwire.DTypeFloat, onnxwire.Dims(1, int64(s.Vocab))...))
	for i := range s.Blocks {
		for _, n := range []string{PastKey(i), PastValue(i)} {
			md.Inputs = append(md.Inputs, onnxwire.ValueInfo(n, onnxwire.DTypeFloat, onnxwire.Dim{Value: kvh}, onnxwire.Sym("past"), onnxwire.Dim{Value: hd}))
		}
		for _, n := range []string{PresentKey(i), PresentValue(i)} {
			md.Outputs = append(md.Outputs, onnxwire.ValueInfo(n, onnxwire.DTypeFloat, onnxwire.Dim{Value: kvh}, onnxwire.Sym("total"), onnxwire.Dim{Value: hd}))
		}
	}

	scalar := func(v int64) string {
		return g.Op("Constant", nil, onnxwire.TensorAttr("value", onnxwire.Int64Tensor("", nil, []int64{v})))
	}
	// P (positions already seen), T (new tokens), their positions and the
	// causal mask [T, P+T]: 0 where a key is at or before the query, −1e9
	// after it.
	past := g.Op("Gather", []string{g.Op("Shape", []string{PastKey(0)}), scalar(1)}, onnxwire.IntAttr("axis", 0))
	newT := g.Op("Gather", []string{g.Op("Shape", []string{InputIDs}), scalar(0)}, onnxwire.IntAttr("axis", 0))
	total := g.Add(past, newT)
	pos := g.Op("Range", []string{past, total, scalar(1)})
	keys := g.Op("Range", []string{scalar(0), total, scalar(1)})
	allowed := g.Op("LessOrEqual", []string{keys, g.Op("Unsqueeze", []string{pos, g.ConstInt64(1)})})
	mask := g.Op("Where", []string{allowed, g.ConstFloat(0), g.ConstFloat(-1e9)})
	cos := g.Reshape(g.Op("Gather", []string{cosT, pos}, onnxwire.IntAttr("axis", 0)), 1, -1, hd/2, 1)
	sin := g.Reshape(g.Op("Gather", []string{sinT, pos}, onnxwire.IntAttr("axis", 0)), 1, -1, hd/2, 1)
	rope := func(x string, nh int64) string { // x [T, nh·hd] → [nh, T, hd], rotated
		x = g.Transpose(g.Reshape(x, -1, nh, hd/2, 2), 1, 0, 2, 3) // [nh, T, hd/2, 2]
		parts := g.OpN("Split", []string{x, g.ConstInt64(1, 1)}, 2, onnxwire.IntAttr("axis", 3))
		x0, x1 := parts[0], parts[1]
		r0 := g.Sub(g.Mul(x0, cos), g.Mul(x1, sin))
		r1 := g.Add(g.Mul(x0, sin), g.Mul(x1, cos))
		return g.Reshape(g.Concat(3, r0, r1), nh, -1, hd)
	}
	eps := g.ConstFloat(float32(s.NormEps))
	rms := func(x, weight string) string {
		ms := g.Op("ReduceMean", []string{g.Mul(x, x)}, onnxwire.IntsAttr("axes", -1), onnxwire.IntAttr("keepdims", 1))
		return g.Mul(g.Div(x, g.Op("Sqrt", []string{g.Add(ms, eps)})), weight)
	}
	proj := func(x, weight string) string { // x [n, in] · weight[out][in]ᵀ
		return g.Op("Gemm", []string{x, weight}, onnxwire.IntAttr("transB", 1))
	}
	scale := g.ConstFloat(float32(1 / math.Sqrt(float64(hd))))

	x := g.Op("Gather", []string{embed, InputIDs}, onnxwire.IntAttr("axis", 0)) // [T, W]
	if tap > 0 && tap < s.Blocks {
		md.Outputs = append(md.Outputs, onnxwire.ValueInfo(OutHidden, onnxwire.DTypeFloat, onnxwire.Sym("seq"), onnxwire.Dim{Value: w}))
	}
	for i, b := range m.blocks {
		if i == tap && tap > 0 {
			g.Identity(x, OutHidden)
		}
		p := "blk" + strconv.Itoa(i) + "_"
		kvw := kvh * hd
		h := rms(x, init(p+"attn_norm", []int64{w}, b.attnNorm))
		q := rope(proj(h, init(p+"q", []int64{w, w}, b.q)), heads) // [H, T, hd]
		k := rope(proj(h, init(p+"k", []int64{kvw, w}, b.k)), kvh) // [kvh, T, hd]
		v := g.Transpose(g.Reshape(proj(h, init(p+"v", []int64{kvw, w}, b.v)), -1, kvh, hd), 1, 0, 2)
		g.Node("Concat", []string{PastKey(i), k}, []string{PresentKey(i)}, onnxwire.IntAttr("axis", 1))
		g.Node("Concat", []string{PastValue(i), v}, []string{PresentValue(i)}, onnxwire.IntAttr("axis", 1))
		// Query head h reads KV head h/group: the queries grouped by their
		// KV head, the keys broadcast over the group.
		q4 := g.Reshape(q, kvh, group, -1, hd)
		k4 := g.Transpose(g.Op("Unsqueeze", []string{PresentKey(i), g.ConstInt64(1)}), 0, 1, 3, 2) // [kvh, 1, hd, S]
		v4 := g.Op("Unsqueeze", []string{PresentValue(i), g.ConstInt64(1)})                        // [kvh, 1, S, hd]
		scores := g.Add(g.Mul(g.MatMul(q4, k4), scale), mask)                                      // [kvh, group, T, S]
		att := g.MatMul(g.Op("Softmax", []string{scores}, onnxwire.IntAttr("axis", -1)), v4)       // [kvh, group, T, hd]
		att = g.Reshape(g.Transpose(g.Reshape(att, heads, -1, hd), 1, 0, 2), -1, w)                // [T, W]
		x = g.Add(x, proj(att, init(p+"o", []int64{w, w}, b.o)))
		h = rms(x, init(p+"ffn_norm", []int64{w}, b.ffnNorm))
		gate := proj(h, init(p+"gate", []int64{int64(s.FeedForward), w}, b.gate))
		up := proj(h, init(p+"up", []int64{int64(s.FeedForward), w}, b.up))
		act := g.Mul(g.Mul(gate, g.Op("Sigmoid", []string{gate})), up)
		x = g.Add(x, proj(act, init(p+"down", []int64{w, int64(s.FeedForward)}, b.down)))
	}
	last := g.Op("Gather", []string{x, g.Op("Unsqueeze", []string{g.Sub(newT, scalar(1)), g.ConstInt64(0)})}, onnxwire.IntAttr("axis", 0)) // [1, W]
	last = rms(last, init("output_norm", []int64{w}, m.norm))
	g.Identity(proj(last, output), OutLogits)
	return md.Bytes()
}

// RopeTables are cos and sin of pos·θ_i for every position below n and
// pair i of a head of hd, θ_i = base^(−2i/hd): Forward's rotation, as the
// ONNX graph and the learner's twin take it ([n][hd/2] each).
func RopeTables(n, hd int, base float64) (cos, sin []float32) {
	cos = make([]float32, n*hd/2)
	sin = make([]float32, n*hd/2)
	for p := range n {
		for i := 0; i < hd; i += 2 {
			theta := float64(p) * math.Pow(base, -float64(i)/float64(hd))
			cos[p*hd/2+i/2] = float32(math.Cos(theta))
			sin[p*hd/2+i/2] = float32(math.Sin(theta))
		}
	}
	return cos, sin
}

// String names the model for logs.
func (m *Model) String() string {
	s := m.Shape
	return fmt.Sprintf("llama %d blocks × %d wide, %d heads (%d KV), vocabulary %d", s.Blocks, s.Width, s.Heads, s.KVHeads, s.Vocab)
}
