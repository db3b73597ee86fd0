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
