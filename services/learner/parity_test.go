package learner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// parityTolerance is the learner issue's acceptance bound on the largest
// absolute difference between the two backends.
const parityTolerance = 1e-4

// TestPolicyParityWithONNXRuntime is the acceptance test of the two
// backends: over several random parameter sets and random inputs (with
// random element, candidate and type masks), the gotch module and ONNX
// Runtime running the exported graph agree on every unmasked logit and the
// value to within 1e-4, mask the same entries, and give the same joint
// log-probs and entropies. It fails if either backend changes alone.
func TestPolicyParityWithONNXRuntime(t *testing.T) {
	small := policy.DefaultArchitecture()
	small.FrameHeight, small.FrameWidth = 16, 24
	small.MaxElements, small.MaxCandidates, small.MaxInstrTokens = 5, 3, 7
	small.ActionTypes = []string{"NOOP", "CLICK", "FILL", "PRESS", "SEND_MSG_TO_USER", "MOUSE_CLICK", "MOUSE_DRAG_AND_DROP"}
	small.Normalize()

	worst := 0.0
	for ai, arch := range []policy.Architecture{policy.DefaultArchitecture(), small} {
		for seed := uint64(1); seed <= 3; seed++ {
			name := fmt.Sprintf("arch%d/seed%d", ai, seed)
			params := arch.NewParams(seed)
			if seed%2 == 0 {
				// Trained-like heads: logits of order 1 instead of 0.1.
				for i, p := range params {
					if slices.Contains([]string{"type_w", "ptr_w", "q_w", "gq_w", "u_w", "v_w", "pt_w", "off_w"}, p.Name) {
						for j := range p.Data {
							params[i].Data[j] *= 10
						}
					}
				}
			}
			rng := rand.New(rand.NewPCG(seed, uint64(ai)))
			feats := make([]*policy.Features, 6)
			for i := range feats {
				feats[i] = randomFeatures(&arch, rng, i == 0)
			}
			d := checkParity(t, name, arch, params, feats, rng)
			worst = math.Max(worst, d)
		}
	}
	t.Logf("largest |gotch - ONNX Runtime| over all outputs, log-probs and entropies: %.3g (bound %g)", worst, parityTolerance)
}

// checkParity runs both backends on feats and returns the largest
// difference seen.
func checkParity(t *testing.T, name string, arch policy.Architecture, params policy.Params, feats []*policy.Features, rng *rand.Rand) float64 {
	t.Helper()
	onnx, err := policy.WriteONNX(arch, params)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sess, err := policy.NewSession(onnx)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer sess.Close()
	batch, err := arch.Stack(feats)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want, err := sess.Run(batch)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}

	// Choices sampled from the ONNX Runtime outputs, and the Go log-probs
	// and entropies of them.
	choices := make([]policy.Choice, len(feats))
	goLP, goH := make([]float64, len(feats)), make([]float64, len(feats))
	for i, f := range feats {
		o := want.Sample(&arch, i)
		dec, err := arch.Sample(f, o, rng, false)
		if err != nil {
			t.Fatalf("%s: sample %d: %v", name, i, err)
		}
		choices[i], goLP[i] = dec.Choice, dec.LogProb
		// Every other sample takes the point head whatever was sampled, a
		// drag where the page allows one, so both of its rows are checked.
		if drag := arch.TypeIndex(eventspb.ActionType_ACTION_TYPE_MOUSE_DRAG_AND_DROP); i%2 == 1 && drag >= 0 && f.TypeMask[drag] == 1 {
			P := arch.Cells() * arch.Offsets()
			choices[i] = policy.Choice{Type: drag, Element: -1, Candidate: -1, Point: rng.IntN(P), ToPoint: rng.IntN(P)}
			if goLP[i], err = arch.LogProb(o, choices[i]); err != nil {
				t.Fatalf("%s: sample %d: %v", name, i, err)
			}
		}
		if goH[i], err = arch.Entropy(o); err != nil {
			t.Fatal(err)
		}
	}

	var got struct{ typ, elem, cand, value, point, offsets, lp, h []float32 }
	var exported policy.Params
	err = onTorchThread(func() error {
		m, err := newPolicyModel(arch, params)
		if err != nil {
			return err
		}
		defer m.close()
		in, err := batchInputs(batch)
		if err != nil {
			return err
		}
		out, err := m.forward(in)
		if err != nil {
			return err
		}
		lp, err := jointLogProb(&arch, out, choices)
		if err != nil {
			return err
		}
		h, err := jointEntropy(&arch, out)
		if err != nil {
			return err
		}
		if got.typ, err = float32Values(out.typeLogits); err != nil {
			return err
		}
		if got.elem, err = float32Values(out.elemLogits); err != nil {
			return err
		}
		if got.cand, err = float32Values(out.candLogits); err != nil {
			return err
		}
		if got.value, err = float32Values(out.value); err != nil {
			return err
		}
		if got.point, err = float32Values(out.pointLogits); err != nil {
			return err
		}
		if got.offsets, err = float32Values(out.pointOffsets); err != nil {
			return err
		}
		if got.lp, err = float32Values(lp); err != nil {
			return err
		}
		if got.h, err = float32Values(h); err != nil {
			return err
		}
		exported, err = m.exportParams()
		return err
	})
	if err != nil {
		t.Fatalf("%s: gotch: %v", name, err)
	}

	worst := 0.0
	compare := func(what string, ort, torch []float32) {
		if len(ort) != len(torch) {
			t.Fatalf("%s: %s: %d values from ONNX Runtime, %d from gotch", name, what, len(ort), len(torch))
		}
		masked, bad := 0, 0
		for i := range ort {
			o, g := float64(ort[i]), float64(torch[i])
			if o <= -1e8 || g <= -1e8 {
				masked++
				if o > -1e8 || g > -1e8 {
					t.Errorf("%s: %s[%d] masked in one backend only: ONNX Runtime %g, gotch %g", name, what, i, o, g)
				}
				continue
			}
			d := math.Abs(o - g)
			worst = math.Max(worst, d)
			if (d > parityTolerance || math.IsNaN(d)) && bad < 3 {
				bad++
				t.Errorf("%s: %s[%d]: ONNX Runtime %g, gotch %g (|diff| %g > %g)", name, what, i, o, g, d, parityTolerance)
			}
		}
		if what != "value" && what != "log-prob" && what != "entropy" && what != "point_logits" && what != "point_offsets" && (masked == 0 || masked == len(ort)) {
			t.Errorf("%s: %s: %d of %d entries masked; the random masks should mask some", name, what, masked, len(ort))
		}
	}
	compare("type_logits", want.TypeLogits, got.typ)
	compare("elem_logits", want.ElemLogits, got.elem)
	compare("cand_logits", want.CandLogits, got.cand)
	compare("value", want.Value, got.value)
	compare("point_logits", want.PointLogits, got.point)
	compare("point_offsets", want.PointOffsets, got.offsets)
	toF32 := func(xs []float64) []float32 {
		out := make([]float32, len(xs))
		for i, x := range xs {
			out[i] = float32(x)
		}
		return out
	}
	compare("log-prob", toF32(goLP), got.lp)
	compare("entropy", toF32(goH), got.h)

	// Export is exact: what the learner publishes is what it trained.
	if len(exported) != len(params) {
		t.Fatalf("%s: exported %d tensors, want %d", name, len(exported), len(params))
	}
	for i := range params {
		if exported[i].Name != params[i].Name || !slices.Equal(exported[i].Shape, params[i].Shape) || !slices.Equal(exported[i].Data, params[i].Data) {
			t.Fatalf("%s: exported parameter %q differs from the loaded one", name, params[i].Name)
		}
	}
	return worst
}

// randomFeatures draws inputs of arch's shapes: random pixels, tokens over
// the whole vocabulary, and random but consistent masks (a type is allowed
// only when it has an eligible element and, for text types, a candidate).
// empty gives a page with no elements and no candidates.
func randomFeatures(a *policy.Architecture, rng *rand.Rand, empty bool) *policy.Features {
	A, E, K := a.NumTypes(), a.MaxElements, a.MaxCandidates
	T, Lt, Lc := a.MaxInstrTokens, a.ElemTokens, a.CandTokens
	F, Fc := len(a.ElementFeatures), len(a.CandidateFeatures)
	f := &policy.Features{
		Frame:          uniform(rng, 3*a.FrameHeight*a.FrameWidth, -0.5, 0.5),
		InstrTokens:    make([]int64, T),
		InstrWeights:   make([]float32, T),
		ElemFeats:      uniform(rng, E*F, 0, 1),
		ElemTokens:     make([]int64, E*Lt),
		ElemTokWeights: make([]float32, E*Lt),
		ElemWeights:    make([]float32, E),
		ElemTypeMask:   make([]float32, A*E),
		CandFeats:      uniform(rng, K*Fc, 0, 1),
		CandTokens:     make([]int64, K*Lc),
		CandTokWeights: make([]float32, K*Lc),
		CandMask:       make([]float32, a.TextRows()*K),
		TypeMask:       make([]float32, A),
		PairFeats:      make([]float32, a.TextRows()*K*len(a.PairFeatures)),
		CellElems:      make([]float32, a.Cells()*E),
		FrameWidth:     160,
		FrameHeight:    210,
	}
	tokens := func(ids []int64, w []float32) {
		n := rng.IntN(len(ids) + 1)
		for i := range n {
			ids[i] = rng.Int64N(int64(a.Vocab))
			w[i] = 1 / float32(n)
		}
	}
	tokens(f.InstrTokens, f.InstrWeights)
	// The first candidates are keys (a press's, on the key row alone),
	// at least one text follows.
	nE, nKeys := 1+rng.IntN(E), 1+rng.IntN(min(len(policy.PressKeys), K-1))
	nK := nKeys + 1 + rng.IntN(K-nKeys)
	if empty {
		nE, nK, nKeys = 0, 0, 0
	}
	f.Keys = nKeys
	for e := range nE {
		tokens(f.ElemTokens[e*Lt:(e+1)*Lt], f.ElemTokWeights[e*Lt:(e+1)*Lt])
		f.ElemWeights[e] = 1 / float32(nE)
		f.BIDs = append(f.BIDs, fmt.Sprintf("b%d", e))
		f.Centers = append(f.Centers, [2]float32{float32(e), float32(e)})
	}
	// Cells under an element: each cell under one kept element, or none.
	for g := range a.Cells() {
		if nE > 0 && rng.IntN(3) > 0 {
			f.CellElems[g*E+rng.IntN(nE)] = 1
		}
	}
	P := len(a.PairFeatures)
	for e := range nE {
		for i := range nK * P {
			f.PairFeats[e*K*P+i] = float32(rng.IntN(2))
		}
	}
	for k := range nK {
		tokens(f.CandTokens[k*Lc:(k+1)*Lc], f.CandTokWeights[k*Lc:(k+1)*Lc])
		if k < nKeys {
			f.CandMask[a.KeyRow()*K+k] = 1
			f.Candidates = append(f.Candidates, policy.PressKeys[k])
			continue
		}
		for r := range E + 1 {
			// Some element rows allow only some candidates, as a select's.
			if k == nKeys || r == E || rng.IntN(4) > 0 {
				f.CandMask[r*K+k] = 1
			}
		}
		f.Candidates = append(f.Candidates, fmt.Sprintf("c%d", k))
	}
	for ti := range A {
		typ := a.TypeAt(ti)
		ok := typ == eventspb.ActionType_ACTION_TYPE_NOOP || rng.Float64() < 0.8
		if policy.UsesElement(typ) {
			any := false
			for e := range nE {
				if rng.Float64() < 0.7 {
					f.ElemTypeMask[ti*E+e] = 1
					any = true
				}
			}
			ok = ok && any
		}
		if policy.UsesText(typ) && nK == 0 {
			ok = false
		}
		if ok {
			f.TypeMask[ti] = 1
		}
	}
	return f
}

func uniform(rng *rand.Rand, n int, lo, hi float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return out
}
