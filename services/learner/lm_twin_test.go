package learner

import (
	"math"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// TestLMTwinMatchesForward: the gotch twin's logits after every position of
// a sequence equal the Go reference's (which runs position by position from
// its cache), to 1e-4, on a random llama of the real one's structure; the
// top blocks are trainable and the rest frozen.
func TestLMTwinMatchesForward(t *testing.T) {
	m := llama.Random(gguf.Llama{Blocks: 3, Width: 32, FeedForward: 48, Heads: 4, KVHeads: 2, RopeDims: 8, Context: 64,
		Vocab: 50, RopeBase: 10000, NormEps: 1e-5}, 9)
	ids := []int32{3, 17, 42, 8, 0, 11, 49}
	err := onTorchThread(func() error {
		tw, err := newLMTwin(m, 1)
		if err != nil {
			return err
		}
		defer tw.close()
		if !tw.trainable("blk2.q") || tw.trainable("blk1.q") || tw.trainable("embed") || !tw.trainable("output_norm") {
			t.Errorf("trainable: blk2.q %v, blk1.q %v, embed %v, output_norm %v",
				tw.trainable("blk2.q"), tw.trainable("blk1.q"), tw.trainable("embed"), tw.trainable("output_norm"))
		}
		lt, err := tw.logits(ids, 0)
		if err != nil {
			return err
		}
		got, err := float64Values(lt)
		if err != nil {
			return err
		}
		V := m.Shape.Vocab
		if len(got) != len(ids)*V {
			t.Fatalf("%d logits, want %d", len(got), len(ids)*V)
		}
		worst := 0.0
		for n := 1; n <= len(ids); n++ {
			want, err := m.Forward(ids[:n], m.NewCache())
			if err != nil {
				return err
			}
			for i := range want {
				d := math.Abs(got[(n-1)*V+i] - float64(want[i]))
				worst = max(worst, d)
				if d > 1e-4 {
					t.Fatalf("position %d logit %d: twin %v, Go %v", n-1, i, got[(n-1)*V+i], want[i])
				}
			}
		}
		t.Logf("largest logit difference %.2g", worst)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationLMTwinParitySmolLM2: on SmolLM2-135M, the learner's twin
// (one pass over prompt and answer) and the actors' ONNX graph (the prompt,
// then the answer token by token from the cache) give the answer's
// per-token log-probs to 1e-3: the behaviour log-probs an actor records
// are the ones the learner computes.
func TestIntegrationLMTwinParitySmolLM2(t *testing.T) {
	f, err := gguf.Open(testenv.LMModel(t))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := f.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	m, err := llama.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := llama.NewSession(m.ONNX(), m.Shape, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	prompt := tok.Encode("<|im_start|>user\nGoal: Click the button \"OK\".\nElements:\n[4] button \"OK\"\n[5] button \"Cancel\"\nYour action:<|im_end|>\n<|im_start|>assistant\n", true)
	answer := tok.Encode(`click("4")`, false)
	kv := sess.NewKV()
	onnx := make([]float64, len(answer))
	logits, err := sess.Run(prompt, kv)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range answer {
		onnx[i] = policy.LogSoftmax(logits)[id]
		if logits, err = sess.Run([]int32{id}, kv); err != nil {
			t.Fatal(err)
		}
	}
	seq := append(append([]int32(nil), prompt...), answer...)
	err = onTorchThread(func() error {
		tw, err := newLMTwin(m, 2)
		if err != nil {
			return err
		}
		defer tw.close()
		lt, err := tw.logits(seq, len(prompt)-1)
		if err != nil {
			return err
		}
		all, err := float64Values(lt)
		if err != nil {
			return err
		}
		V := m.Shape.Vocab
		worst := 0.0
		for i, id := range answer {
			row := all[i*V : (i+1)*V]
			r32 := make([]float32, V)
			for j, v := range row {
				r32[j] = float32(v)
			}
			twin := policy.LogSoftmax(r32)[id]
			worst = max(worst, math.Abs(twin-onnx[i]))
			if math.Abs(twin-onnx[i]) > 1e-3 {
				t.Errorf("answer token %d %q: twin %.5f, ONNX %.5f", i, tok.Token(id), twin, onnx[i])
			}
		}
		t.Logf("%d prompt + %d answer tokens; largest per-token log-prob difference %.2g; ONNX log-probs %v", len(prompt), len(answer), worst, onnx)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
