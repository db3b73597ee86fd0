package llama

import (
	"math"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
)

// tiny is a random llama of the real one's structure at a small size: 2
// blocks, 4 heads over 2 KV heads (groups of 2), head dim 8.
func tiny(seed uint64) *Model {
	return Random(gguf.Llama{Blocks: 2, Width: 32, FeedForward: 48, Heads: 4, KVHeads: 2, RopeDims: 8, Context: 64, Vocab: 50, RopeBase: 10000, NormEps: 1e-5}, seed)
}

// TestIntegrationONNXMatchesForward: the ONNX graph on ONNX Runtime gives
// Forward's logits, for a prompt and then token by token from the cache
// (the actors' generation), to 1e-4.
func TestIntegrationONNXMatchesForward(t *testing.T) {
	m := tiny(3)
	sess, err := NewSession(m.ONNX(), m.Shape, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ref, kv := m.NewCache(), sess.NewKV()
	worst := 0.0
	for step, ids := range [][]int32{{3, 17, 42, 8, 0}, {11}, {49}, {7, 7}} {
		want, err := m.Forward(ids, ref)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sess.Run(ids, kv)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if len(got) != len(want) {
			t.Fatalf("step %d: %d logits, want %d", step, len(got), len(want))
		}
		for i := range want {
			d := math.Abs(float64(got[i] - want[i]))
			worst = max(worst, d)
			if d > 1e-4 {
				t.Fatalf("step %d logit %d: ONNX %v, Go %v", step, i, got[i], want[i])
			}
		}
		if kv.Len() != ref.Len() {
			t.Fatalf("step %d: caches hold %d and %d positions", step, kv.Len(), ref.Len())
		}
	}
	t.Logf("largest logit difference %.2g", worst)
}

// TestWeightsRoundTrip: a version's tensors encode and decode unchanged,
// and set into another model of the shape make it compute as the first.
func TestWeightsRoundTrip(t *testing.T) {
	a, b := tiny(1), tiny(2)
	var top []Tensor
	for _, w := range a.Tensors() {
		top = append(top, w) // all of them: b becomes a
	}
	enc, err := EncodeWeights(top)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := DecodeWeights(enc)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SetTensors(dec); err != nil {
		t.Fatal(err)
	}
	ids := []int32{1, 2, 3}
	la, _ := a.Forward(ids, a.NewCache())
	lb, _ := b.Forward(ids, b.NewCache())
	for i := range la {
		if la[i] != lb[i] {
			t.Fatalf("logit %d: %v after the round trip, %v before", i, lb[i], la[i])
		}
	}
	if err := b.SetTensors([]Tensor{{Name: "blk9.q", Data: []float32{1}}}); err == nil {
		t.Error("an unknown weight was set")
	}
	if err := b.SetTensors([]Tensor{{Name: "blk0.q", Data: []float32{1}}}); err == nil {
		t.Error("a weight of the wrong size was set")
	}
}

// TestIntegrationONNXTapGivesHiddenStates: the tapped graph gives the
// untapped one's logits and, for every token fed (a prompt, then one at a
// time), one row of hidden states, which half precision keeps to 1e-3.
// That they are the states after the tap block, the learner's twin shows:
// started from them it scores the actor's answers as the actor did
// (services/learner TestLMLogProbsMatchTheActor).
func TestIntegrationONNXTapGivesHiddenStates(t *testing.T) {
	m := tiny(5)
	plain, err := NewSession(m.ONNX(), m.Shape, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	tapped, err := NewTapSession(m.ONNXTap(1), m.Shape, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer tapped.Close()
	if _, err := NewTapSession(m.ONNXTap(2), m.Shape, 1, 2); err == nil {
		t.Error("a tap after the last block was accepted")
	}
	kp, kt := plain.NewKV(), tapped.NewKV()
	rows := 0
	for step, ids := range [][]int32{{3, 17, 42, 8, 0}, {11}, {49}} {
		want, err := plain.Run(ids, kp)
		if err != nil {
			t.Fatal(err)
		}
		got, hidden, err := tapped.Hidden(ids, kt)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-5 {
				t.Fatalf("step %d logit %d: tapped %v, untapped %v", step, i, got[i], want[i])
			}
		}
		if len(hidden) != len(ids)*m.Shape.Width {
			t.Fatalf("step %d: %d hidden values for %d tokens of width %d", step, len(hidden), len(ids), m.Shape.Width)
		}
		rows += len(ids)
		enc, err := EncodeHidden(hidden, m.Shape.Width)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := DecodeHidden(enc, len(ids), m.Shape.Width)
		if err != nil {
			t.Fatal(err)
		}
		for i := range hidden {
			if d := math.Abs(float64(dec[i] - hidden[i])); d > 1e-3*math.Max(1, math.Abs(float64(hidden[i]))) {
				t.Fatalf("hidden %d: %v after half precision, %v before", i, dec[i], hidden[i])
			}
		}
	}
	if rows != kt.Len() {
		t.Errorf("%d hidden rows for %d cached positions", rows, kt.Len())
	}
	if _, err := EncodeHidden([]float32{1, float32(math.Inf(1))}, 2); err == nil {
		t.Error("an infinite state was encoded")
	}
	if _, err := EncodeHidden([]float32{70000, 0}, 2); err == nil {
		t.Error("a state beyond half precision was encoded")
	}
	if _, err := DecodeHidden(make([]byte, 6), 2, 2); err == nil {
		t.Error("6 bytes decoded as 2 rows of 2")
	}
}
