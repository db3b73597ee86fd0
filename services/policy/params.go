package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// ParamSpec is one named parameter tensor and how it is initialised.
type ParamSpec struct {
	Name  string
	Shape []int64
	// FanIn scales the uniform init bound 1/sqrt(FanIn) (PyTorch's Linear
	// and Conv default); Gain multiplies it (small for output heads, so a
	// fresh policy is close to uniform).
	FanIn int64
	Gain  float64
}

// Param is one named float32 tensor, row-major.
type Param struct {
	Name  string
	Shape []int64
	Data  []float32
}

// Params is the ordered parameter set of an architecture; names and shapes
// follow Architecture.ParamSpecs. It is what the ONNX initializers hold and
// what the gotch module loads and exports.
type Params []Param

// Get returns the named parameter.
func (p Params) Get(name string) (Param, bool) {
	for _, x := range p {
		if x.Name == name {
			return x, true
		}
	}
	return Param{}, false
}

// Count returns the number of scalars.
func (p Params) Count() int {
	n := 0
	for _, x := range p {
		n += len(x.Data)
	}
	return n
}

// ParamSpecs lists the parameters in their canonical order. Names contain
// no '.', which gotch's VarStore reserves as its path separator.
func (a *Architecture) ParamSpecs() []ParamSpec {
	D, Hd, Dv := int64(a.EmbedDim), int64(a.Hidden), int64(a.VisualDim)
	C1, C2 := int64(a.Conv1Channels), int64(a.Conv2Channels)
	oh, ow := a.ConvOut()
	A := int64(a.NumTypes())
	F, Fc := int64(len(elementFeatureNames)), int64(len(candidateFeatureNames))
	lin := func(name string, in, out int64, gain float64) []ParamSpec {
		return []ParamSpec{
			{Name: name + "_w", Shape: []int64{in, out}, FanIn: in, Gain: gain},
			{Name: name + "_b", Shape: []int64{out}, FanIn: in, Gain: gain},
		}
	}
	var s []ParamSpec
	// Embedding: uniform(±0.1·√3), i.e. std 0.1.
	s = append(s, ParamSpec{Name: "embed", Shape: []int64{int64(a.Vocab), D}, FanIn: 1, Gain: 0.1 * math.Sqrt(3)})
	s = append(s,
		ParamSpec{Name: "conv1_w", Shape: []int64{C1, 3, 4, 4}, FanIn: 3 * 16, Gain: 1},
		ParamSpec{Name: "conv1_b", Shape: []int64{C1}, FanIn: 3 * 16, Gain: 1},
		ParamSpec{Name: "conv2_w", Shape: []int64{C2, C1, 4, 4}, FanIn: C1 * 16, Gain: 1},
		ParamSpec{Name: "conv2_b", Shape: []int64{C2}, FanIn: C1 * 16, Gain: 1},
	)
	s = append(s, lin("vis", C2*int64(oh*ow), Dv, 1)...)
	s = append(s, lin("ctx", D+Dv, Hd, 1)...)
	s = append(s, lin("el1", F+2*D, Hd, 1)...)
	s = append(s, lin("el2", Hd, Hd, 1)...)
	s = append(s, ParamSpec{Name: "elctx_w", Shape: []int64{Hd, Hd}, FanIn: Hd, Gain: 1})
	s = append(s, lin("glob", 2*Hd, Hd, 1)...)
	s = append(s, lin("type", Hd, A, 0.1)...)
	s = append(s, lin("ptr", Hd, A, 0.1)...)
	s = append(s, lin("c1", Fc+2*D, Hd, 1)...)
	s = append(s, lin("c2", Hd, Hd, 1)...)
	s = append(s, ParamSpec{Name: "cglob_w", Shape: []int64{Hd, Hd}, FanIn: Hd, Gain: 1})
	s = append(s, lin("q", Hd, Hd, 0.1)...)
	s = append(s, lin("gq", Hd, Hd, 0.1)...)
	s = append(s, lin("u", Hd, 1, 0.1)...)
	s = append(s, ParamSpec{Name: "pair_w", Shape: []int64{int64(len(pairFeatureNames)), 1}, FanIn: int64(len(pairFeatureNames)), Gain: 0.1})
	s = append(s, lin("v", Hd, 1, 0.1)...)
	// The point head (features v16), after the rest so that the older
	// parameters keep their order.
	G := int64(a.Cells())
	Hp := int64(a.PointHidden)
	s = append(s, lin("cell", C2, Hp, 1)...)
	s = append(s, ParamSpec{Name: "cellpos", Shape: []int64{G, Hp}, FanIn: 1, Gain: 0.1 * math.Sqrt(3)})
	s = append(s, ParamSpec{Name: "cellel_w", Shape: []int64{Hd, Hp}, FanIn: Hd, Gain: 1})
	s = append(s, ParamSpec{Name: "cellglob_w", Shape: []int64{Hd, Hp}, FanIn: Hd, Gain: 1})
	s = append(s, lin("pt", Hp, A+1, 0.1)...)
	s = append(s, lin("off", Hp, int64(a.Offsets()), 0.1)...)
	// The key row of the text head (features v18).
	s = append(s, lin("kq", Hd, Hd, 0.1)...)
	return s
}

// InitSeed seeds the version-0 policy, so that an actor without published
// weights and a learner without a checkpoint start from the same parameters.
const InitSeed = 1

// InitialONNX returns the version-0 model of a: NewParams(InitSeed) written
// by WriteONNX.
func InitialONNX(a Architecture) ([]byte, error) {
	return InitialONNXSeeded(a, InitSeed)
}

// InitialONNXSeeded is InitialONNX of a run seeded with seed: the learner's
// first parameters under learner.WithSeed(seed).
func InitialONNXSeeded(a Architecture, seed uint64) ([]byte, error) {
	return WriteONNX(a, a.NewParams(seed))
}

// NewParams draws a deterministic random initialisation: the same
// architecture and seed always give the same values.
func (a *Architecture) NewParams(seed uint64) Params {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	specs := a.ParamSpecs()
	p := make(Params, len(specs))
	for i, s := range specs {
		n := int64(1)
		for _, d := range s.Shape {
			n *= d
		}
		bound := s.Gain / math.Sqrt(float64(s.FanIn))
		data := make([]float32, n)
		for j := range data {
			data[j] = float32((rng.Float64()*2 - 1) * bound)
		}
		p[i] = Param{Name: s.Name, Shape: slices.Clone(s.Shape), Data: data}
	}
	return p
}

// CheckParams verifies that p holds exactly the architecture's parameters,
// in order, with matching shapes and data lengths, and only finite values.
func (a *Architecture) CheckParams(p Params) error {
	specs := a.ParamSpecs()
	if len(p) != len(specs) {
		return fmt.Errorf("unable to use parameters: got %d tensors, want %d", len(p), len(specs))
	}
	for i, s := range specs {
		x := p[i]
		if x.Name != s.Name {
			return fmt.Errorf("unable to use parameters: tensor %d is %q, want %q", i, x.Name, s.Name)
		}
		if !slices.Equal(x.Shape, s.Shape) {
			return fmt.Errorf("unable to use parameter %q: shape %v, want %v", s.Name, x.Shape, s.Shape)
		}
		n := int64(1)
		for _, d := range s.Shape {
			n *= d
		}
		if int64(len(x.Data)) != n {
			return fmt.Errorf("unable to use parameter %q: %d values for shape %v", s.Name, len(x.Data), s.Shape)
		}
		for _, v := range x.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("unable to use parameter %q: non-finite value", s.Name)
			}
		}
	}
	return nil
}

// OrderParams returns p's tensors in the architecture's canonical order,
// for sources (an ONNX file, a VarStore) that may list them differently.
func (a *Architecture) OrderParams(p Params) (Params, error) {
	byName := make(map[string]Param, len(p))
	for _, x := range p {
		byName[x.Name] = x
	}
	specs := a.ParamSpecs()
	out := make(Params, 0, len(specs))
	for _, s := range specs {
		x, ok := byName[s.Name]
		if !ok {
			return nil, fmt.Errorf("unable to use parameters: %q is missing", s.Name)
		}
		out = append(out, x)
	}
	if len(byName) != len(specs) {
		return nil, fmt.Errorf("unable to use parameters: got %d distinct tensors, want %d", len(byName), len(specs))
	}
	if err := a.CheckParams(out); err != nil {
		return nil, err
	}
	return out, nil
}
