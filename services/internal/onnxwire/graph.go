package onnxwire

import (
	"strconv"
)

// Graph accumulates NodeProtos, naming each output "t<n>".
type Graph struct {
	Nodes [][]byte
	n     int
}

// Node appends a node of opType with outputs outs.
func (g *Graph) Node(opType string, inputs, outs []string, attrs ...[]byte) {
	g.n++
	var b []byte
	for _, in := range inputs {
		b = AppendString(b, NodeInput, in)
	}
	for _, o := range outs {
		b = AppendString(b, NodeOutput, o)
	}
	b = AppendString(b, NodeName, opType+"_"+strconv.Itoa(g.n))
	b = AppendString(b, NodeOpType, opType)
	for _, a := range attrs {
		b = AppendBytes(b, NodeAttr, a)
	}
	g.Nodes = append(g.Nodes, b)
}

// Op appends a node with one output and returns its generated name.
func (g *Graph) Op(opType string, inputs []string, attrs ...[]byte) string {
	out := "t" + strconv.Itoa(g.n+1)
	g.Node(opType, inputs, []string{out}, attrs...)
	return out
}

// OpN appends a node with n outputs and returns their generated names.
func (g *Graph) OpN(opType string, inputs []string, n int, attrs ...[]byte) []string {
	outs := make([]string, n)
	for i := range outs {
		outs[i] = "t" + strconv.Itoa(g.n+1) + "_" + strconv.Itoa(i)
	}
	g.Node(opType, inputs, outs, attrs...)
	return outs
}

// Identity names value x as out (a graph output).
func (g *Graph) Identity(x, out string) { g.Node("Identity", []string{x}, []string{out}) }

// ConstInt64 and ConstFloat are Constant nodes: an int64 vector and a
// float32 scalar.
func (g *Graph) ConstInt64(vals ...int64) string {
	return g.Op("Constant", nil, TensorAttr("value", Int64Tensor("", []int64{int64(len(vals))}, vals)))
}

func (g *Graph) ConstFloat(v float32) string {
	return g.Op("Constant", nil, TensorAttr("value", FloatTensor("", nil, []float32{v})))
}

func (g *Graph) MatMul(x, w string) string { return g.Op("MatMul", []string{x, w}) }
func (g *Graph) Add(x, y string) string    { return g.Op("Add", []string{x, y}) }
func (g *Graph) Sub(x, y string) string    { return g.Op("Sub", []string{x, y}) }
func (g *Graph) Mul(x, y string) string    { return g.Op("Mul", []string{x, y}) }
func (g *Graph) Div(x, y string) string    { return g.Op("Div", []string{x, y}) }
func (g *Graph) Relu(x string) string      { return g.Op("Relu", []string{x}) }
func (g *Graph) Reshape(x string, shape ...int64) string {
	return g.Op("Reshape", []string{x, g.ConstInt64(shape...)})
}
func (g *Graph) Concat(axis int64, xs ...string) string {
	return g.Op("Concat", xs, IntAttr("axis", axis))
}
func (g *Graph) ReduceSum(x string, axis int64) string {
	return g.Op("ReduceSum", []string{x, g.ConstInt64(axis)}, IntAttr("keepdims", 0))
}
func (g *Graph) Transpose(x string, perm ...int64) string {
	return g.Op("Transpose", []string{x}, IntsAttr("perm", perm...))
}

// Model is an ONNX model to encode.
type Model struct {
	Name, Producer, ProducerVersion string
	Opset                           int64
	Graph                           *Graph
	// Initializers, Inputs and Outputs are encoded TensorProtos and
	// ValueInfoProtos (FloatTensor, ValueInfo).
	Initializers, Inputs, Outputs [][]byte
	// Metadata are the model's metadata_props, in order.
	Metadata [][2]string
}

// Bytes is the encoded ModelProto.
func (m Model) Bytes() []byte {
	var gb []byte
	for _, n := range m.Graph.Nodes {
		gb = AppendBytes(gb, GraphNode, n)
	}
	gb = AppendString(gb, GraphName, m.Name)
	for _, x := range m.Initializers {
		gb = AppendBytes(gb, GraphInitializer, x)
	}
	for _, x := range m.Inputs {
		gb = AppendBytes(gb, GraphInput, x)
	}
	for _, x := range m.Outputs {
		gb = AppendBytes(gb, GraphOutput, x)
	}
	var mb []byte
	mb = AppendVarint(mb, ModelIRVersion, IRVersion)
	mb = AppendString(mb, ModelProducerName, m.Producer)
	mb = AppendString(mb, ModelProducerVer, m.ProducerVersion)
	mb = AppendBytes(mb, ModelGraph, gb)
	var ops []byte
	ops = AppendString(ops, OpsetDomain, "")
	ops = AppendVarint(ops, OpsetVersion, uint64(m.Opset))
	mb = AppendBytes(mb, ModelOpsetImport, ops)
	for _, kv := range m.Metadata {
		var e []byte
		e = AppendString(e, EntryKey, kv[0])
		e = AppendString(e, EntryValue, kv[1])
		mb = AppendBytes(mb, ModelMetadataProps, e)
	}
	return mb
}
