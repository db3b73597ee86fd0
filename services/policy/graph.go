package policy

import (
	"fmt"
	"strconv"
)

// MetadataArchKey is the ONNX metadata_props key holding the architecture
// JSON, so an ONNX file alone is enough to featurize for it.
const MetadataArchKey = "asyncwebrl.architecture"

// maskScale turns a 0/1 mask into the additive mask (mask-1)·1e9, computed
// as mask·1e9 - 1e9 (1e9 is exact in float32, so valid entries add exactly 0).
const maskScale = 1e9

// graph accumulates NodeProtos with generated value names.
type graph struct {
	nodes [][]byte
	n     int
}

// op appends a node and returns its (single) output name.
func (g *graph) op(opType string, inputs []string, attrs ...[]byte) string {
	g.n++
	out := "t" + strconv.Itoa(g.n)
	var b []byte
	for _, in := range inputs {
		b = appendString(b, nodeInput, in)
	}
	b = appendString(b, nodeOutput, out)
	b = appendString(b, nodeName, opType+"_"+strconv.Itoa(g.n))
	b = appendString(b, nodeOpType, opType)
	for _, a := range attrs {
		b = appendBytes(b, nodeAttr, a)
	}
	g.nodes = append(g.nodes, b)
	return out
}

func (g *graph) constInt64(vals ...int64) string {
	return g.op("Constant", nil, tensorAttr("value", int64TensorProto([]int64{int64(len(vals))}, vals)))
}

func (g *graph) constFloat(v float32) string {
	return g.op("Constant", nil, tensorAttr("value", floatTensorProto("", nil, []float32{v})))
}

func (g *graph) matmul(x, w string) string    { return g.op("MatMul", []string{x, w}) }
func (g *graph) add(x, y string) string       { return g.op("Add", []string{x, y}) }
func (g *graph) mul(x, y string) string       { return g.op("Mul", []string{x, y}) }
func (g *graph) relu(x string) string         { return g.op("Relu", []string{x}) }
func (g *graph) linear(x, name string) string { return g.add(g.matmul(x, name+"_w"), name+"_b") }
func (g *graph) reshape(x string, shape ...int64) string {
	return g.op("Reshape", []string{x, g.constInt64(shape...)})
}
func (g *graph) concat(axis int64, xs ...string) string {
	return g.op("Concat", xs, intAttr("axis", axis))
}
func (g *graph) reduceSum(x string, axis int64) string {
	return g.op("ReduceSum", []string{x, g.constInt64(axis)}, intAttr("keepdims", 0))
}
func (g *graph) transpose(x string, perm ...int64) string {
	return g.op("Transpose", []string{x}, intsAttr("perm", perm...))
}

// additiveMask returns mask·1e9 + (-1e9).
func (g *graph) additiveMask(mask string) string {
	return g.add(g.mul(mask, g.constFloat(maskScale)), g.constFloat(-maskScale))
}

// bagOfWords returns Σ_l weights[...,l]·embed[tokens[...,l]]: the masked mean
// of the token embeddings over the last axis; dims are the tokens' shape
// without the batch dimension.
func (g *graph) bagOfWords(tokens, weights string, dims ...int64) string {
	emb := g.op("Gather", []string{"embed", tokens}, intAttr("axis", 0))
	w := g.reshape(weights, append(append([]int64{-1}, dims...), 1)...)
	return g.reduceSum(g.mul(emb, w), int64(len(dims)))
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
		return g.relu(g.op("Conv", []string{x, name + "_w", name + "_b"},
			intsAttr("kernel_shape", 4, 4), intsAttr("strides", 2, 2), intsAttr("pads", 1, 1, 1, 1)))
	}
	fmap := conv(conv(InFrame, "conv1"), "conv2") // [B,C2,oh,ow]
	v := g.reshape(fmap, -1, int64(a.Conv2Channels*oh*ow))
	vis := g.relu(g.linear(v, "vis")) // [B,Dv]

	// Instruction: mean of word embeddings.
	inst := g.bagOfWords(InInstrTokens, InInstrWeights, T) // [B,D]
	inst3 := g.reshape(inst, -1, 1, D)                     // [B,1,D]
	ctx := g.relu(g.linear(g.concat(1, inst, vis), "ctx")) // [B,H]

	// Elements.
	elEmb := g.bagOfWords(InElemTokens, InElemTokWeights, E, Lt) // [B,E,D]
	elIn := g.concat(2, InElemFeats, elEmb, g.mul(elEmb, inst3))
	e1 := g.relu(g.linear(elIn, "el1"))
	ctxE := g.reshape(g.matmul(ctx, "elctx_w"), -1, 1, Hd)
	e2 := g.relu(g.add(g.add(g.matmul(e1, "el2_w"), ctxE), "el2_b")) // [B,E,H]
	pooled := g.reduceSum(g.mul(e2, g.reshape(InElemWeights, -1, E, 1)), 1)
	glob := g.relu(g.linear(g.concat(1, ctx, pooled), "glob")) // [B,H]

	// Heads.
	typeLogits := g.add(g.linear(glob, "type"), g.additiveMask(InTypeMask))
	ptr := g.transpose(g.linear(e2, "ptr"), 0, 2, 1) // [B,A,E]
	elemLogits := g.add(ptr, g.additiveMask(InElemTypeMask))

	cEmb := g.bagOfWords(InCandTokens, InCandTokWeights, K, Lc) // [B,K,D]
	cIn := g.concat(2, InCandFeats, cEmb, g.mul(cEmb, inst3))
	c1 := g.relu(g.linear(cIn, "c1"))
	cg := g.reshape(g.matmul(glob, "cglob_w"), -1, 1, Hd)
	c2 := g.relu(g.add(g.add(g.matmul(c1, "c2_w"), cg), "c2_b")) // [B,K,H]
	rowsE := g.linear(e2, "q")                                   // [B,E,H]
	rowG := g.reshape(g.linear(glob, "gq"), -1, 1, Hd)           // [B,1,H]
	rowK := g.reshape(g.linear(glob, "kq"), -1, 1, Hd)           // [B,1,H]: the key row
	rows := g.concat(1, rowsE, rowG, rowK)                       // [B,R,H], R = E+2
	bil := g.matmul(rows, g.transpose(c2, 0, 2, 1))              // [B,R,K]
	un := g.reshape(g.linear(c2, "u"), -1, 1, K)                 // [B,1,K]
	pair := g.reshape(g.matmul(InPairFeats, "pair_w"), -1, R, K) // [B,R,K]
	candMask := g.reshape(g.additiveMask(InCandMask), -1, R, K)
	candLogits := g.add(g.add(g.add(bil, un), pair), candMask)

	value := g.linear(glob, "v") // [B,1]

	// Point head: one row per cell of the conv map, from the cell's
	// features, its position, the elements under it and the context.
	G := int64(a.Cells())
	cells := g.transpose(g.reshape(fmap, -1, int64(a.Conv2Channels), G), 0, 2, 1) // [B,G,C2]
	under := g.matmul(InCellElems, g.matmul(e2, "cellel_w"))                      // [B,G,Hp]
	cg2 := g.reshape(g.matmul(glob, "cellglob_w"), -1, 1, int64(a.PointHidden))   // [B,1,Hp]
	ch := g.relu(g.add(g.add(g.add(g.add(g.matmul(cells, "cell_w"), "cellpos"), under), cg2), "cell_b"))
	pointLogits := g.transpose(g.linear(ch, "pt"), 0, 2, 1) // [B,A+1,G]
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
		b = appendString(b, nodeInput, outs[i])
		b = appendString(b, nodeOutput, s.Name)
		b = appendString(b, nodeName, "out_"+s.Name)
		b = appendString(b, nodeOpType, "Identity")
		g.nodes = append(g.nodes, b)
	}

	var gb []byte
	for _, n := range g.nodes {
		gb = appendBytes(gb, graphNode, n)
	}
	gb = appendString(gb, graphName, a.Name)
	for _, x := range p {
		gb = appendBytes(gb, graphInitializer, floatTensorProto(x.Name, x.Shape, x.Data))
	}
	for _, s := range a.InputSpecs() {
		dt := dtypeFloat
		if s.DType == "int64" {
			dt = dtypeInt64
		}
		gb = appendBytes(gb, graphInput, valueInfo(s.Name, dt, s.Shape))
	}
	for _, s := range outSpecs {
		gb = appendBytes(gb, graphOutput, valueInfo(s.Name, dtypeFloat, s.Shape))
	}

	var mb []byte
	mb = appendVarint(mb, modelIRVersion, irVersion)
	mb = appendString(mb, modelProducerName, "asyncwebrl")
	mb = appendString(mb, modelProducerVer, fmt.Sprintf("%s/features-%d", a.Name, a.FeaturesVersion))
	mb = appendBytes(mb, modelGraph, gb)
	var ops []byte
	ops = appendString(ops, opsetDomain, "")
	ops = appendVarint(ops, opsetVersion, uint64(a.Opset))
	mb = appendBytes(mb, modelOpsetImport, ops)
	var kv []byte
	kv = appendString(kv, entryKey, MetadataArchKey)
	kv = appendString(kv, entryValue, archJSON)
	mb = appendBytes(mb, modelMetadataProps, kv)
	return mb, nil
}
