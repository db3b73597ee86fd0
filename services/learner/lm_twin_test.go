package learner

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/casstore"
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
					lt, err := tw.logits(ids, from, nil)
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
		lt, err := tw.logits(seq, len(prompt)-1, nil)
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
// ("cached"), and with each sample's frozen-block output kept for its next
// draw as well ("reused": every update after the first draws the same
// samples), or read from the actor's copy ("actor": the states an actor
// kept, llama.HiddenFormat in a casstore, loaded on every draw as a fresh
// sample's would be; the cache is off). In every mode but "whole" and
// "actor-unshared" (actor's, as before 12-07) the system message runs
// through the trainable blocks once an update (sharedPrefix), not once a
// sample. Run with the model fetched
// (infra/setup.sh lm):
//
//	go test ./services/learner -run '^$' -bench LMStepSmolLM2 -benchtime 3x
func BenchmarkLMStepSmolLM2(b *testing.B) {
	m, tok := llamatest.SmolLM2(b)
	set := action.SetBid
	sys := lm.SystemIDs(tok, set, lm.AnswerAction)
	var user []int32
	for i := 0; len(user) < 400; i++ {
		user = append(user, tok.Encode(fmt.Sprintf("[%d] button \"Option %d\" at (%d, %d)\n", i+3, i, 10*i, 20+i), false)...)
	}
	answer := tok.Encode(`click("12")`, false)
	allowed := make([][]int32, len(answer))
	for i, id := range answer {
		allowed[i] = []int32{id, id + 1, id + 2}
	}
	store, err := casstore.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	rows := len(user) + len(answer) - 1
	states := make([]float32, rows*m.Shape.Width)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range states {
		states[i] = float32(rng.NormFloat64())
	}
	blob, err := llama.EncodeHidden(states, m.Shape.Width)
	if err != nil {
		b.Fatal(err)
	}
	sha, err := store.Put(blob)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"whole", "cached", "reused", "actor", "actor-unshared"} {
		b.Run(mode, func(b *testing.B) {
			err := onTorchThread(func() error {
				var cache int64
				if mode == "reused" {
					cache = DefaultFrozenCacheBytes
				}
				tr, err := newLMTrainer(m, 2, DefaultHyper(), cache, nil, 0)
				if err != nil {
					return err
				}
				defer tr.close()
				tr.tw.store = store
				tr.tw.noShare = mode == "actor-unshared"
				var batch []*lmSample
				for i := range 4 {
					s := &lmSample{prompt: append(slices.Clone(sys), user...), answer: answer, allowed: allowed, adv: float64(i%2*2 - 1), logpOld: -3}
					if mode != "whole" {
						s.system = len(sys)
					}
					if mode == "reused" {
						s.frozen = &frozenSlot{}
					}
					if strings.HasPrefix(mode, "actor") {
						s.frozen = &frozenSlot{ref: &frozenRef{sha: sha, blocks: m.Shape.Blocks - 2, rows: rows}}
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
				if strings.HasPrefix(mode, "actor") && tr.tw.loaded != int64(4*b.N) {
					return fmt.Errorf("%d of %d draws loaded the actor's states", tr.tw.loaded, 4*b.N)
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestLMTwinFrozenCache: a sample's second pass takes the frozen blocks'
// output from the cache and gives the same logits to the bit; a new prefix
// or a sequence of another length is a miss; the budget evicts the least
// recently used slot; close frees every cached tensor.
func TestLMTwinFrozenCache(t *testing.T) {
	m := llama.Random(gguf.Llama{Blocks: 3, Width: 32, FeedForward: 48, Heads: 4, KVHeads: 2, RopeDims: 8, Context: 64,
		Vocab: 50, RopeBase: 10000, NormEps: 1e-5}, 9)
	a := []int32{3, 17, 42, 8, 0, 11, 49}
	b := []int32{3, 17, 5, 6, 7, 1, 2, 9}
	err := onTorchThread(func() error {
		tw, err := newLMTwin(m, 1)
		if err != nil {
			return err
		}
		defer tw.close()
		// Room for two slots of 5 positions past a 2-token prefix, not three.
		tw.cache = newFrozenCache(2 * 5 * 32 * 4)
		if err := tw.setPrefix(a[:2]); err != nil {
			return err
		}
		run := func(ids []int32, slot *frozenSlot) ([]float64, error) {
			lt, err := tw.logits(ids, 3, slot)
			if err != nil {
				return nil, err
			}
			defer func() { _ = lt.Drop() }()
			return float64Values(lt)
		}
		want, err := run(a, nil)
		if err != nil {
			return err
		}
		sa, sb, sc := &frozenSlot{}, &frozenSlot{}, &frozenSlot{}
		for pass := range 3 {
			got, err := run(a, sa)
			if err != nil {
				return err
			}
			if !slices.Equal(got, want) {
				t.Fatalf("pass %d with the cache: logits differ from the pass without it", pass)
			}
		}
		if tw.cache.hits != 2 || tw.cache.misses != 1 || sa.x == nil {
			t.Errorf("three passes of one sample: %d hits, %d misses, cached %v; want 2, 1, true", tw.cache.hits, tw.cache.misses, sa.x != nil)
		}
		if _, err := run(b, sb); err != nil { // 6 positions past the prefix: over half the budget
			return err
		}
		if sa.x != nil && sb.x != nil && tw.cache.used > tw.cache.budget {
			t.Errorf("cache holds %d bytes over its budget %d", tw.cache.used, tw.cache.budget)
		}
		if sa.x != nil {
			t.Errorf("the least recently used slot was kept past the budget")
		}
		if _, err := run(a[:6], sc); err != nil {
			return err
		}
		if sb.x != nil && sc.x != nil && tw.cache.used > tw.cache.budget {
			t.Errorf("cache holds %d bytes over its budget %d", tw.cache.used, tw.cache.budget)
		}
		// A slot computed for a sequence of one length is no other's.
		hits := tw.cache.hits
		if _, err := run(a, sc); err != nil {
			return err
		}
		if tw.cache.hits != hits {
			t.Errorf("a slot cached for 4 positions served a sequence of 5")
		}
		// A new prefix: every slot cached after the old one is a miss, and the
		// logits are the new prefix's.
		if err := tw.setPrefix(a[:3]); err != nil {
			return err
		}
		want3, err := run(a, nil)
		if err != nil {
			return err
		}
		hits = tw.cache.hits
		got3, err := run(a, sc)
		if err != nil {
			return err
		}
		if tw.cache.hits != hits || !slices.Equal(got3, want3) {
			t.Errorf("after a new prefix: hit %v, logits equal %v; want a miss and the new prefix's logits", tw.cache.hits != hits, slices.Equal(got3, want3))
		}
		tw.cache.clear()
		if tw.cache.used != 0 || tw.cache.lru.Len() != 0 || sc.x != nil {
			t.Errorf("clear left %d bytes in %d slots", tw.cache.used, tw.cache.lru.Len())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
