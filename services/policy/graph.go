package policy

import (
	"fmt"

	"github.com/asyncwebrl/asyncwebrl/services/internal/onnxwire"
)

// MetadataArchKey is the ONNX metadata_props key holding the architecture
// JSON, so an ONNX file alone is enough to featurize for it.
const MetadataArchKey = "asyncwebrl.architecture"

// maskScale turns a 0/1 mask into the additive mask (mask-1)·1e9, computed
// as mask·1e9 - 1e9 (1e9 is exact in float32, so valid entries add exactly 0).
const maskScale = 1e9

// graph is the ONNX graph builder with the network's own pieces (a linear
// layer's weight and bias by name, the additive mask, the bag of words).
type graph struct{ onnxwire.Graph }

func (g *graph) linear(x, name string) string { return g.Add(g.MatMul(x, name+"_w"), name+"_b") }

// additiveMask returns mask·1e9 + (-1e9).
func (g *graph) additiveMask(mask string) string {
	return g.Add(g.Mul(mask, g.ConstFloat(maskScale)), g.ConstFloat(-maskScale))
}

// bagOfWords returns Σ_l weights[...,l]·embed[tokens[...,l]]: the masked mean
// of the token embeddings over the last axis; dims are the tokens' shape
// without the batch dimension.
func (g *graph) bagOfWords(tokens, weights string, dims ...int64) string {
	emb := g.Op("Gather", []string{"embed", tokens}, onnxwire.IntAttr("axis", 0))
	w := g.Reshape(weights, append(append([]int64{-1}, dims...), 1)...)
	return g.ReduceSum(g.Mul(emb, w), int64(len(dims)))
}

// buildGraph emits the network. Every op here has a twin in
// services/learner/model.go; keep the two in step (the parity test checks).
func (a *Architecture) buildGraph() (g *graph, outputs [6]string) {
	g = &graph{}
	T, E, K := int64(a.MaxInstrTokens), int64(a.MaxElements), int64(a.MaxCandidates)
	R := int64(a.TextRows())
	D, Hd := int64(a.EmbedDim), int64(a.Hidden)
	Lt, Lc := int64(a.ElemTokens), int64(a.CandTokens)
	oh, ow := a.ConvOut()

	// Visual encoder: two 4x4 stride-2 pad-1 convs, flatten, linear.
	conv := func(x, name string) string {
		return g.Relu(g.Op("Conv", []string{x, name + "_w", name + "_b"},
			onnxwire.IntsAttr("kernel_shape", 4, 4), onnxwire.IntsAttr("strides", 2, 2), onnxwire.IntsAttr("pads", 1, 1, 1, 1)))
	}
	fmap := conv(conv(InFrame, "conv1"), "conv2") // [B,C2,oh,ow]
	v := g.Reshape(fmap, -1, int64(a.Conv2Channels*oh*ow))
	vis := g.Relu(g.linear(v, "vis")) // [B,Dv]

	// Instruction: mean of word embeddings.
	inst := g.bagOfWords(InInstrTokens, InInstrWeights, T) // [B,D]
	inst3 := g.Reshape(inst, -1, 1, D)                     // [B,1,D]
	ctx := g.Relu(g.linear(g.Concat(1, inst, vis), "ctx")) // [B,H]

	// Elements.
	elEmb := g.bagOfWords(InElemTokens, InElemTokWeights, E, Lt) // [B,E,D]
	elIn := g.Concat(2, InElemFeats, elEmb, g.Mul(elEmb, inst3))
	e1 := g.Relu(g.linear(elIn, "el1"))
	ctxE := g.Reshape(g.MatMul(ctx, "elctx_w"), -1, 1, Hd)
	e2 := g.Relu(g.Add(g.Add(g.MatMul(e1, "el2_w"), ctxE), "el2_b")) // [B,E,H]
	pooled := g.ReduceSum(g.Mul(e2, g.Reshape(InElemWeights, -1, E, 1)), 1)
	glob := g.Relu(g.linear(g.Concat(1, ctx, pooled), "glob")) // [B,H]

	// Heads.
	typeLogits := g.Add(g.linear(glob, "type"), g.additiveMask(InTypeMask))
	ptr := g.Transpose(g.linear(e2, "ptr"), 0, 2, 1) // [B,A,E]
	elemLogits := g.Add(ptr, g.additiveMask(InElemTypeMask))

	cEmb := g.bagOfWords(InCandTokens, InCandTokWeights, K, Lc) // [B,K,D]
	cIn := g.Concat(2, InCandFeats, cEmb, g.Mul(cEmb, inst3))
	c1 := g.Relu(g.linear(cIn, "c1"))
	cg := g.Reshape(g.MatMul(glob, "cglob_w"), -1, 1, Hd)
	c2 := g.Relu(g.Add(g.Add(g.MatMul(c1, "c2_w"), cg), "c2_b")) // [B,K,H]
	rowsE := g.linear(e2, "q")                                   // [B,E,H]
	rowG := g.Reshape(g.linear(glob, "gq"), -1, 1, Hd)           // [B,1,H]
	rowK := g.Reshape(g.linear(glob, "kq"), -1, 1, Hd)           // [B,1,H]: the key row
	rows := g.Concat(1, rowsE, rowG, rowK)                       // [B,R,H], R = E+2
	bil := g.MatMul(rows, g.Transpose(c2, 0, 2, 1))              // [B,R,K]
	un := g.Reshape(g.linear(c2, "u"), -1, 1, K)                 // [B,1,K]
	pair := g.Reshape(g.MatMul(InPairFeats, "pair_w"), -1, R, K) // [B,R,K]
	candMask := g.Reshape(g.additiveMask(InCandMask), -1, R, K)
	candLogits := g.Add(g.Add(g.Add(bil, un), pair), candMask)

	value := g.linear(glob, "v") // [B,1]

	// Point head: one row per cell of the conv map, from the cell's
	// features, its position, the elements under it and the context.
	G := int64(a.Cells())
	cells := g.Transpose(g.Reshape(fmap, -1, int64(a.Conv2Channels), G), 0, 2, 1) // [B,G,C2]
	under := g.MatMul(InCellElems, g.MatMul(e2, "cellel_w"))                      // [B,G,Hp]
	cg2 := g.Reshape(g.MatMul(glob, "cellglob_w"), -1, 1, int64(a.PointHidden))   // [B,1,Hp]
	ch := g.Relu(g.Add(g.Add(g.Add(g.Add(g.MatMul(cells, "cell_w"), "cellpos"), under), cg2), "cell_b"))
	pointLogits := g.Transpose(g.linear(ch, "pt"), 0, 2, 1) // [B,A+1,G]
	offsets := g.linear(ch, "off")                          // [B,G,S²]
	return g, [6]string{typeLogits, elemLogits, candLogits, value, pointLogits, offsets}
}

// WriteONNX encodes the architecture and parameters as an ONNX model (opset
// a.Opset, IR version 8): the whole graph, the parameters as initializers and
// the architecture JSON in metadata_props.
func WriteONNX(a Architecture, p Params) ([]byte, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	a.Normalize()
	if err := a.CheckParams(p); err != nil {
		return nil, err
	}
	archJSON, err := a.JSON()
	if err != nil {
		return nil, err
	}
	g, outs := a.buildGraph()
	// Graph outputs need their names: add Identity nodes from the computed
	// values to the public names.
	outSpecs := a.OutputSpecs()
	for i, s := range outSpecs {
		var b []byte
		b = onnxwire.AppendString(b, onnxwire.NodeInput, outs[i])
		b = onnxwire.AppendString(b, onnxwire.NodeOutput, s.Name)
		b = onnxwire.AppendString(b, onnxwire.NodeName, "out_"+s.Name)
		b = onnxwire.AppendString(b, onnxwire.NodeOpType, "Identity")
		g.Nodes = append(g.Nodes, b)
	}
	m := onnxwire.Model{Name: a.Name, Producer: "asyncwebrl", ProducerVersion: fmt.Sprintf("%s/features-%d", a.Name, a.FeaturesVersion),
		Opset: int64(a.Opset), Graph: &g.Graph, Metadata: [][2]string{{MetadataArchKey, archJSON}}}
	for _, x := range p {
		m.Initializers = append(m.Initializers, onnxwire.FloatTensor(x.Name, x.Shape, x.Data))
	}
	for _, s := range a.InputSpecs() {
		dt := onnxwire.DTypeFloat
		if s.DType == "int64" {
			dt = onnxwire.DTypeInt64
		}
		m.Inputs = append(m.Inputs, batchValueInfo(s.Name, dt, s.Shape))
	}
	for _, s := range outSpecs {
		m.Outputs = append(m.Outputs, batchValueInfo(s.Name, onnxwire.DTypeFloat, s.Shape))
	}
	return m.Bytes(), nil
}

// batchValueInfo is a tensor's ValueInfoProto whose first dimension is the
// symbolic "batch".
func batchValueInfo(name string, dtype int, shape []int64) []byte {
	return onnxwire.ValueInfo(name, dtype, append([]onnxwire.Dim{onnxwire.Sym("batch")}, onnxwire.Dims(shape...)...)...)
}
