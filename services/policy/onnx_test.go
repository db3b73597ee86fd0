package policy

import (
	"bytes"
	"math"
	"slices"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

func TestWriteReadONNXRoundTripIsExact(t *testing.T) {
	a := DefaultArchitecture()
	p := a.NewParams(7)
	b, err := WriteONNX(a, p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadONNX(b)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Arch.SameShapes(&a) {
		t.Fatal("architecture changed in the round trip")
	}
	if len(m.Params) != len(p) {
		t.Fatalf("read %d tensors, wrote %d", len(m.Params), len(p))
	}
	for i := range p {
		if m.Params[i].Name != p[i].Name || !slices.Equal(m.Params[i].Shape, p[i].Shape) {
			t.Fatalf("tensor %d: read %s%v, wrote %s%v", i, m.Params[i].Name, m.Params[i].Shape, p[i].Name, p[i].Shape)
		}
		for j := range p[i].Data {
			if math.Float32bits(m.Params[i].Data[j]) != math.Float32bits(p[i].Data[j]) {
				t.Fatalf("%s[%d]: read %v, wrote %v", p[i].Name, j, m.Params[i].Data[j], p[i].Data[j])
			}
		}
	}
	// Writing is deterministic, so the re-written bytes are identical.
	b2, err := WriteONNX(m.Arch, m.Params)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, b2) {
		t.Fatal("re-writing the read model gave different bytes")
	}
}

func TestNewParamsIsSeeded(t *testing.T) {
	a := smallArch()
	p1, p2, p3 := a.NewParams(1), a.NewParams(1), a.NewParams(2)
	if err := a.CheckParams(p1); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p1[1].Data, p2[1].Data) {
		t.Fatal("the same seed gave different parameters")
	}
	if slices.Equal(p1[1].Data, p3[1].Data) {
		t.Fatal("different seeds gave the same parameters")
	}
}

func TestWriteONNXRejectsWrongParams(t *testing.T) {
	a := smallArch()
	p := a.NewParams(1)
	p[3].Data = p[3].Data[1:]
	if _, err := WriteONNX(a, p); err == nil {
		t.Fatal("want an error for a short tensor")
	}
	p = a.NewParams(1)
	p[0].Data[0] = float32(math.NaN())
	if _, err := WriteONNX(a, p); err == nil {
		t.Fatal("want an error for a NaN")
	}
}

func TestReadONNXRejectsMalformedInput(t *testing.T) {
	b := testModel(t, smallArch(), 1)
	// Every truncation must fail cleanly (never panic); the reader needs
	// the graph, the metadata and every initializer.
	for n := 0; n < len(b); n += 1 + n/8 {
		if _, err := ReadONNX(b[:n]); err == nil {
			t.Fatalf("truncated to %d of %d bytes: want an error", n, len(b))
		}
	}
	if _, err := ReadONNX([]byte("not a model")); err == nil {
		t.Fatal("want an error for garbage")
	}
}

func FuzzReadONNX(f *testing.F) {
	f.Add(testModel(f, smallArch(), 1)[:200])
	f.Add([]byte{0x3a, 0x02, 0x2a, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ReadONNX(b) // must not panic
	})
}

// TestONNXRuntimeLoadsAndBatchesConsistently runs the written graph in
// ONNX Runtime: the outputs have the documented shapes, masked entries are
// near -1e9, and a sample's outputs do not depend on its batch neighbours.
func TestONNXRuntimeLoadsAndBatchesConsistently(t *testing.T) {
	a := DefaultArchitecture()
	s, err := NewSession(testModel(t, a, 3))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f1, err := a.Featurize(clickButtonObs(t))
	if err != nil {
		t.Fatal(err)
	}
	f2, err := a.Featurize(typeTextObs())
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.Stack([]*Features{f1, f2, f1})
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.Run(b)
	if err != nil {
		t.Fatal(err)
	}
	A, E, K := a.NumTypes(), a.MaxElements, a.MaxCandidates
	if len(all.TypeLogits) != 3*A || len(all.ElemLogits) != 3*A*E || len(all.CandLogits) != 3*a.TextRows()*K || len(all.Value) != 3 {
		t.Fatalf("output sizes %d %d %d %d", len(all.TypeLogits), len(all.ElemLogits), len(all.CandLogits), len(all.Value))
	}
	one, err := a.Stack([]*Features{f2})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := s.Run(one)
	if err != nil {
		t.Fatal(err)
	}
	x, y := all.Sample(&a, 1), alone.Sample(&a, 0)
	for _, pair := range [][2][]float32{{x.TypeLogits, y.TypeLogits}, {x.ElemLogits, y.ElemLogits}, {x.CandLogits, y.CandLogits}, {{x.Value}, {y.Value}}} {
		for i := range pair[0] {
			if d := math.Abs(float64(pair[0][i] - pair[1][i])); d > 1e-5 && pair[0][i] > maskedBelow {
				t.Fatalf("sample differs in a batch and alone by %g", d)
			}
		}
	}
	// Masks: FILL has no target on the click page, element 3+ does not exist.
	o := all.Sample(&a, 0)
	fill := a.TypeIndex(eventspb.ActionType_ACTION_TYPE_FILL)
	if o.TypeLogits[fill] > -1e8 {
		t.Errorf("FILL logit %v, want masked", o.TypeLogits[fill])
	}
	click := a.TypeIndex(eventspb.ActionType_ACTION_TYPE_CLICK)
	if l := o.ElemLogits[click*E+1]; l < -1e8 {
		t.Errorf("CLICK on element 1 masked: %v", l)
	}
	if l := o.ElemLogits[click*E+3]; l > -1e8 {
		t.Errorf("CLICK on missing element 3: %v, want masked", l)
	}
}
