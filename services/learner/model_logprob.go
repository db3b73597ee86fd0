package learner

import (
	"fmt"

	"github.com/sugarme/gotch"
	"github.com/sugarme/gotch/ts"

	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// jointLogProb returns [B] log π(choice_b | s_b) under out, with the
// definition of policy.Architecture.LogProb (documented in policy's doc.go):
// the type's log-prob, plus the element's under the chosen type's row when
// the type uses an element, plus the candidate's under row TextRow(type,
// element) when it uses text, plus each point's (its cell's under the
// type's point row, or row A for a drag's release, and its sub-cell's under
// that cell). It is differentiable: the PPO ratio is
// exp(jointLogProb - logp_old). Choices must come from ChoiceOf/Sample on
// the same features (unused heads are -1).
func jointLogProb(a *policy.Architecture, out *modelOutputs, choices []policy.Choice) (*ts.Tensor, error) {
	B := len(choices)
	A, E, K := a.NumTypes(), a.MaxElements, a.MaxCandidates
	typeIdx := make([]int64, B)
	elemFlat, elemIdx := make([]int64, B), make([]int64, B)
	candFlat, candIdx := make([]int64, B), make([]int64, B)
	useElem, useText := make([]float32, B), make([]float32, B)
	G, S2 := a.Cells(), a.Offsets()
	pointFlat, pointIdx, usePoint := make([]int64, B), make([]int64, B), make([]float32, B)
	toFlat, toIdx, useTo := make([]int64, B), make([]int64, B), make([]float32, B)
	// The sub-cell rows ([B·G, S²]) of the chosen cells.
	offFlat, offIdx := make([]int64, B), make([]int64, B)
	toOffFlat, toOffIdx := make([]int64, B), make([]int64, B)
	for b, c := range choices {
		if c.Type < 0 || c.Type >= A {
			return nil, fmt.Errorf("unable to compute log-prob: sample %d has type %d of %d", b, c.Type, A)
		}
		typ := a.TypeAt(c.Type)
		typeIdx[b] = int64(c.Type)
		elemFlat[b] = int64(b*A + c.Type)
		if policy.UsesElement(typ) {
			if c.Element < 0 || c.Element >= E {
				return nil, fmt.Errorf("unable to compute log-prob: sample %d has element %d", b, c.Element)
			}
			useElem[b], elemIdx[b] = 1, int64(c.Element)
		}
		row := a.TextRow(typ, max(c.Element, 0))
		candFlat[b] = int64(b*a.TextRows() + row)
		if policy.UsesText(typ) {
			if c.Candidate < 0 || c.Candidate >= K {
				return nil, fmt.Errorf("unable to compute log-prob: sample %d has candidate %d", b, c.Candidate)
			}
			useText[b], candIdx[b] = 1, int64(c.Candidate)
		}
		pointFlat[b], toFlat[b] = int64(b*(A+1)+c.Type), int64(b*(A+1)+A)
		if policy.UsesPoint(typ) {
			if c.Point < 0 || c.Point >= G*S2 {
				return nil, fmt.Errorf("unable to compute log-prob: sample %d has point %d", b, c.Point)
			}
			usePoint[b], pointIdx[b], offIdx[b] = 1, int64(c.Point/S2), int64(c.Point%S2)
		}
		offFlat[b] = int64(b*G) + pointIdx[b]
		if policy.UsesToPoint(typ) {
			if c.ToPoint < 0 || c.ToPoint >= G*S2 {
				return nil, fmt.Errorf("unable to compute log-prob: sample %d has release point %d", b, c.ToPoint)
			}
			useTo[b], toIdx[b], toOffIdx[b] = 1, int64(c.ToPoint/S2), int64(c.ToPoint%S2)
		}
		toOffFlat[b] = int64(b*G) + toIdx[b]
	}
	s := &scope{}
	tensor := func(v any, shape ...int64) *ts.Tensor {
		if s.err != nil {
			return nil
		}
		switch x := v.(type) {
		case []int64:
			return s.keep(int64Tensor(x, shape...))
		case []float32:
			return s.keep(float32Tensor(x, shape...))
		}
		return nil
	}
	pick := func(logits *ts.Tensor, idx *ts.Tensor) *ts.Tensor {
		// log_softmax over the last axis of [B,N], then the entry idx[b].
		return s.reshape(s.gather(s.logSoftmax(logits, 1), 1, idx), -1)
	}
	Bn := int64(B)
	lpType := pick(out.typeLogits, tensor(typeIdx, Bn, 1))
	elemRows := s.indexSelect(s.reshape(out.elemLogits, -1, int64(E)), tensor(elemFlat, Bn))
	lpElem := s.mul(pick(elemRows, tensor(elemIdx, Bn, 1)), tensor(useElem, Bn))
	candRows := s.indexSelect(s.reshape(out.candLogits, -1, int64(K)), tensor(candFlat, Bn))
	lpCand := s.mul(pick(candRows, tensor(candIdx, Bn, 1)), tensor(useText, Bn))
	pointRows := s.reshape(out.pointLogits, -1, int64(G))
	offRows := s.reshape(out.pointOffsets, -1, int64(S2))
	position := func(flat, idx, oflat, oidx []int64, use []float32) *ts.Tensor {
		cell := pick(s.indexSelect(pointRows, tensor(flat, Bn)), tensor(idx, Bn, 1))
		sub := pick(s.indexSelect(offRows, tensor(oflat, Bn)), tensor(oidx, Bn, 1))
		return s.mul(s.add(cell, sub), tensor(use, Bn))
	}
	lpPoint := position(pointFlat, pointIdx, offFlat, offIdx, usePoint)
	lpTo := position(toFlat, toIdx, toOffFlat, toOffIdx, useTo)
	total := s.add(s.add(s.add(s.add(lpType, lpElem), lpCand), lpPoint), lpTo)
	if err := s.finish(total); err != nil {
		return nil, fmt.Errorf("unable to compute log-prob: %w", err)
	}
	return total, nil
}

// jointEntropy returns [B] exact entropies of the joint action distribution,
// with the definition of policy.Architecture.Entropy.
func jointEntropy(a *policy.Architecture, out *modelOutputs) (*ts.Tensor, error) {
	A, E := a.NumTypes(), int64(a.MaxElements)
	uE, uT, notE, uK := make([]float32, A), make([]float32, A), make([]float32, A), make([]float32, A)
	uP, uTo := make([]float32, A), make([]float32, A)
	for t := range A {
		typ := a.TypeAt(t)
		// A point's entropy weighs PointEntropyScale (policy.Entropy).
		w := float32(a.PointEntropyScale())
		uP[t], uTo[t] = w*bool32(policy.UsesPoint(typ)), w*bool32(policy.UsesToPoint(typ))
		if policy.UsesElement(typ) {
			uE[t] = 1
		} else {
			notE[t] = 1
		}
		if policy.UsesText(typ) {
			uT[t] = 1
		}
		// A press's key is scored on the key row, whatever its element.
		if policy.UsesKey(typ) {
			uK[t], uT[t] = 1, 0
		}
	}
	s := &scope{}
	useK := s.keep(float32Tensor(uK, int64(A)))
	useE := s.keep(float32Tensor(uE, int64(A)))
	useT := s.keep(float32Tensor(uT, int64(A)))
	noE := s.keep(float32Tensor(notE, int64(A)))
	useP := s.keep(float32Tensor(uP, int64(A)))
	useTo := s.keep(float32Tensor(uTo, int64(A)))
	// entropy returns -Σ p·log p over dim, and p.
	entropy := func(logits *ts.Tensor, dim int64) (*ts.Tensor, *ts.Tensor) {
		lp := s.logSoftmax(logits, dim)
		p := s.exp(lp)
		return s.neg(s.sum(s.mul(p, lp), dim)), p
	}
	hType, pType := entropy(out.typeLogits, 1) // [B], [B,A]
	hElem, pElem := entropy(out.elemLogits, 2) // [B,A], [B,A,E]
	hCand, _ := entropy(out.candLogits, 2)     // [B,E+2]
	hCandE := s.reshape(s.narrow(hCand, 1, 0, E), -1, E, 1)
	condE := s.reshape(s.matmul(pElem, hCandE), -1, int64(A)) // Σ_e π(e|t)·H(text|e)
	hCandG := s.narrow(hCand, 1, E, 1)                        // [B,1]
	hCandK := s.narrow(hCand, 1, E+1, 1)                      // [B,1]
	condCand := s.add(s.mul(condE, useE), s.mul(hCandG, noE))
	hCell, pCell := entropy(out.pointLogits, 2) // [B,A+1], [B,A+1,G]
	hOff, _ := entropy(out.pointOffsets, 2)     // [B,G]
	hPoint := s.add(hCell, s.sum(s.mul(pCell, s.reshape(hOff, -1, 1, int64(a.Cells()))), 2))
	hPointT := s.narrow(hPoint, 1, 0, int64(A))
	hRelease := s.narrow(hPoint, 1, int64(A), 1) // [B,1]
	perType := s.add(s.add(s.mul(hElem, useE), s.mul(condCand, useT)), s.mul(hCandK, useK))
	perType = s.add(s.add(perType, s.mul(hPointT, useP)), s.mul(hRelease, useTo))
	total := s.add(hType, s.sum(s.mul(pType, perType), 1))
	if err := s.finish(total); err != nil {
		return nil, fmt.Errorf("unable to compute entropy: %w", err)
	}
	return total, nil
}

func (s *scope) logSoftmax(x *ts.Tensor, dim int64) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.LogSoftmax(dim, gotch.Float, false))
}

func (s *scope) gather(x *ts.Tensor, dim int64, idx *ts.Tensor) *ts.Tensor {
	if !s.ok(x, idx) {
		return nil
	}
	return s.keep(x.Gather(dim, idx, false, false))
}

func (s *scope) indexSelect(x *ts.Tensor, idx *ts.Tensor) *ts.Tensor {
	if !s.ok(x, idx) {
		return nil
	}
	return s.keep(x.IndexSelect(0, idx, false))
}

func (s *scope) exp(x *ts.Tensor) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.Exp(false))
}

func (s *scope) neg(x *ts.Tensor) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.Neg(false))
}

func (s *scope) narrow(x *ts.Tensor, dim, start, length int64) *ts.Tensor {
	if !s.ok(x) {
		return nil
	}
	return s.keep(x.Narrow(dim, start, length, false))
}

// bool32 is 1 for true, 0 for false.
func bool32(b bool) float32 {
	if b {
		return 1
	}
	return 0
}
