package policy

import (
	"fmt"
	"slices"
)

// Input is one batched graph input: Shape includes the batch dimension and
// exactly one of F32 and I64 holds the row-major data.
type Input struct {
	Name  string
	Shape []int64
	F32   []float32
	I64   []int64
}

// Batch holds the inputs of Size samples in Architecture.InputSpecs order;
// both backends (ONNX Runtime here, gotch in the learner) consume it.
type Batch struct {
	Size   int
	Inputs []Input
}

// fields returns f's tensors in InputSpecs order (each []float32 or []int64).
func (f *Features) fields() []any {
	ps := f.arrays()
	out := make([]any, len(ps))
	for i, p := range ps {
		switch p := p.(type) {
		case *[]float32:
			out[i] = *p
		case *[]int64:
			out[i] = *p
		}
	}
	return out
}

// arrays returns pointers to f's tensors in InputSpecs order (each
// *[]float32 or *[]int64): what Bytes counts and Pack packs.
func (f *Features) arrays() []any {
	return []any{
		&f.Frame, &f.InstrTokens, &f.InstrWeights, &f.ElemFeats, &f.ElemTokens, &f.ElemTokWeights,
		&f.ElemWeights, &f.ElemTypeMask, &f.CandFeats, &f.CandTokens, &f.CandTokWeights, &f.CandMask, &f.TypeMask,
		&f.PairFeats, &f.CellElems,
	}
}

// Stack concatenates features along a new leading batch dimension. Every
// feature must have the architecture's shapes.
func (a *Architecture) Stack(fs []*Features) (*Batch, error) {
	rows := make([][]any, len(fs))
	for j, f := range fs {
		if f == nil {
			return nil, fmt.Errorf("unable to stack: sample %d is nil", j)
		}
		rows[j] = f.fields()
	}
	return a.stack(rows)
}

// StackPacked is Stack of packed features, without unpacking them: a
// packed array's non-zero entries go straight into the batch.
func (a *Architecture) StackPacked(ps []*Packed) (*Batch, error) {
	rows := make([][]any, len(ps))
	for j, p := range ps {
		if p == nil {
			return nil, fmt.Errorf("unable to stack: sample %d is nil", j)
		}
		rows[j] = p.arrays
	}
	return a.stack(rows)
}

// stack stacks rows, each a sample's tensors in InputSpecs order: []float32,
// []int64, packedArray[float32] or packedArray[int64].
func (a *Architecture) stack(rows [][]any) (*Batch, error) {
	if len(rows) == 0 {
		return nil, fmt.Errorf("unable to stack an empty batch")
	}
	specs := a.InputSpecs()
	b := &Batch{Size: len(rows), Inputs: make([]Input, len(specs))}
	for i, s := range specs {
		per := 1
		for _, d := range s.Shape {
			per *= int(d)
		}
		in := Input{Name: s.Name, Shape: append([]int64{int64(len(rows))}, s.Shape...)}
		if s.DType == "int64" {
			in.I64 = make([]int64, per*len(rows))
		} else {
			in.F32 = make([]float32, per*len(rows))
		}
		for j, row := range rows {
			var n int
			var ok bool
			switch v := row[i].(type) {
			case []float32:
				n, ok = len(v), copy(in.F32[j*per:], v) == len(v)
			case []int64:
				n, ok = len(v), copy(in.I64[j*per:], v) == len(v)
			case packedArray[float32]:
				n, ok = v.n, in.F32 != nil && v.put(in.F32[j*per:j*per+min(per, v.n)])
			case packedArray[int64]:
				n, ok = v.n, in.I64 != nil && v.put(in.I64[j*per:j*per+min(per, v.n)])
			}
			if n != per || !ok {
				return nil, fmt.Errorf("unable to stack %s of sample %d: %d values, want %d %s", s.Name, j, n, per, s.DType)
			}
		}
		b.Inputs[i] = in
	}
	return b, nil
}

// Input returns the named input.
func (b *Batch) Input(name string) (Input, bool) {
	i := slices.IndexFunc(b.Inputs, func(in Input) bool { return in.Name == name })
	if i < 0 {
		return Input{}, false
	}
	return b.Inputs[i], true
}

// Outputs are the batched network outputs, row-major: TypeLogits [B,A],
// ElemLogits [B,A,E], CandLogits [B,E+2,K], Value [B], PointLogits
// [B,A+1,G].
type Outputs struct {
	Size         int
	TypeLogits   []float32
	ElemLogits   []float32
	CandLogits   []float32
	Value        []float32
	PointLogits  []float32
	PointOffsets []float32
}

// Output is one sample's outputs, stamped with the weights version that
// computed it.
type Output struct {
	TypeLogits []float32 // [A]
	ElemLogits []float32 // [A,E]
	CandLogits []float32 // [E+2,K]: the element rows, the element-free row, the key row
	Value      float32
	// PointLogits [A+1,G]: row t scores the cells for type t's point, row
	// A a drag's release point; PointOffsets [G,S²] the sub-cells of every
	// cell.
	PointLogits, PointOffsets []float32
	// Version of the weights that computed these outputs.
	Version uint64
	// BatchSize is the size of the batch this sample ran in.
	BatchSize int
	// InferenceMicros is the time ONNX Runtime took for that batch.
	InferenceMicros int64
}

// Sample returns sample i's outputs (sharing memory with o).
func (o *Outputs) Sample(a *Architecture, i int) *Output {
	A, E, K, G, S2, R := a.NumTypes(), a.MaxElements, a.MaxCandidates, a.Cells(), a.Offsets(), a.TextRows()
	return &Output{
		TypeLogits:   o.TypeLogits[i*A : (i+1)*A],
		ElemLogits:   o.ElemLogits[i*A*E : (i+1)*A*E],
		CandLogits:   o.CandLogits[i*R*K : (i+1)*R*K],
		Value:        o.Value[i],
		PointLogits:  o.PointLogits[i*(A+1)*G : (i+1)*(A+1)*G],
		PointOffsets: o.PointOffsets[i*G*S2 : (i+1)*G*S2],
	}
}
