package learner

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama/llamatest"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// TestLMTwinMatchesForward: the gotch twin's logits after every position of
// a sequence equal the Go reference's (which runs position by position from
// its cache), to 1e-4, on a random llama of the real one's structure: with
// no, some and all blocks trainable, and with and without a cached prefix
// (whose frozen keys and values the rest attends to).
func TestLMTwinMatchesForward(t *testing.T) {
	m := llama.Random(gguf.Llama{Blocks: 3, Width: 32, FeedForward: 48, Heads: 4, KVHeads: 2, RopeDims: 8, Context: 64,
		Vocab: 50, RopeBase: 10000, NormEps: 1e-5}, 9)
	ids := []int32{3, 17, 42, 8, 0, 11, 49}
	V := m.Shape.Vocab
	want := make([][]float32, len(ids))
	for n := 1; n <= len(ids); n++ {
		w, err := m.Forward(ids[:n], m.NewCache())
		if err != nil {
			t.Fatal(err)
		}
		want[n-1] = w
	}
	for _, train := range []int{0, 1, 3} {
		for _, prefix := range []int{0, 1, 4} {
			err := onTorchThread(func() error {
				tw, err := newLMTwin(m, train)
				if err != nil {
					return err
				}
				defer tw.close()
				if prefix > 0 {
					if err := tw.setPrefix(ids[:prefix]); err != nil {
						return err
					}
					if !tw.prefix.matches(ids) || tw.prefix.matches(ids[:prefix]) || tw.prefix.matches([]int32{4, 17, 42, 8, 0}) {
						t.Errorf("prefix %v matches the wrong sequences", ids[:prefix])
					}
				}
				for _, from := range []int{0, 5} {
					lt, err := tw.logits(ids, from)
					if err != nil {
						return err
					}
					got, err := float64Values(lt)
					_ = lt.Drop()
					if err != nil {
						return err
					}
					if len(got) != (len(ids)-from)*V {
						t.Fatalf("train %d prefix %d from %d: %d logits, want %d", train, prefix, from, len(got), (len(ids)-from)*V)
					}
					worst := 0.0
					for n := from; n < len(ids); n++ {
						for i, w := range want[n] {
							d := math.Abs(got[(n-from)*V+i] - float64(w))
							worst = max(worst, d)
							if d > 1e-4 {
								t.Fatalf("train %d prefix %d: position %d logit %d: twin %v, Go %v", train, prefix, n, i, got[(n-from)*V+i], w)
							}
						}
					}
					t.Logf("train %d, prefix %d, from %d: largest logit difference %.2g", train, prefix, from, worst)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
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
	m, tok := llamatest.SmolLM2(t)
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

// BenchmarkLMStepSmolLM2 is one GRPO update of SmolLM2-135M's top two
// blocks on four samples of a realistic size (the action set's system
// message, a 400-token user message, a 10-token answer), with the system
// message run through the frozen blocks every pass ("whole") or once
// ("cached"). Run with the model fetched (infra/setup.sh lm):
//
//	go test ./services/learner -run '^$' -bench LMStepSmolLM2 -benchtime 3x
func BenchmarkLMStepSmolLM2(b *testing.B) {
	m, tok := llamatest.SmolLM2(b)
	set := action.SetBid
	sys := lm.SystemIDs(tok, set)
	var user []int32
	for i := 0; len(user) < 400; i++ {
		user = append(user, tok.Encode(fmt.Sprintf("[%d] button \"Option %d\" at (%d, %d)\n", i+3, i, 10*i, 20+i), false)...)
	}
	answer := tok.Encode(`click("12")`, false)
	allowed := make([][]int32, len(answer))
	for i, id := range answer {
		allowed[i] = []int32{id, id + 1, id + 2}
	}
	for _, mode := range []string{"whole", "cached"} {
		b.Run(mode, func(b *testing.B) {
			err := onTorchThread(func() error {
				tr, err := newLMTrainer(m, 2, DefaultHyper())
				if err != nil {
					return err
				}
				defer tr.close()
				var batch []*lmSample
				for i := range 4 {
					s := &lmSample{prompt: append(slices.Clone(sys), user...), answer: answer, allowed: allowed, adv: float64(i%2*2 - 1), logpOld: -3}
					if mode == "cached" {
						s.system = len(sys)
					}
					batch = append(batch, s)
				}
				b.ResetTimer()
				for range b.N {
					if _, err := tr.step(context.Background(), batch); err != nil {
						return err
					}
				}
				b.ReportMetric(float64(len(sys)+len(user)+len(answer)), "tokens/sample")
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
