package llama_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama/llamatest"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// TestIntegrationLlamaMatchesLlamaCpp: the Go forward pass on SmolLM2's
// GGUF against llama.cpp's on the same file (llama-server's /completion
// with n_probs), on a chat prompt: the same most likely next token, and
// the log-probs of llama.cpp's five most likely within tol. Not closer:
// llama.cpp multiplies the Q4_1 weights by activations it quantizes to 8
// bits (its q4_1 × q8_1 dot product), the reference keeps the activations
// float32; on this prompt that moves log-probs by up to 0.16 (12-05).
func TestIntegrationLlamaMatchesLlamaCpp(t *testing.T) {
	const tol = 0.25
	m, tok := llamatest.SmolLM2(t)
	base, _ := testenv.LMServer(t)
	prompt := "<|im_start|>user\nClick the button labelled \"Submit\". Elements: [3] button \"Cancel\" [4] button \"Submit\"<|im_end|>\n<|im_start|>assistant\nclick(\""
	ids := tok.Encode(prompt, true)
	logits, err := m.Forward(ids, m.NewCache())
	if err != nil {
		t.Fatal(err)
	}
	lp := policy.LogSoftmax(logits)
	best := 0
	for i := range lp {
		if lp[i] > lp[best] {
			best = i
		}
	}

	body, _ := json.Marshal(map[string]any{"prompt": ids, "n_predict": 1, "n_probs": 5, "temperature": 0, "cache_prompt": false})
	resp, err := http.Post(base+"/completion", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Probs []struct {
			ID  int32 `json:"id"`
			Top []struct {
				ID      int32   `json:"id"`
				Token   string  `json:"token"`
				Logprob float64 `json:"logprob"`
			} `json:"top_logprobs"`
		} `json:"completion_probabilities"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || resp.StatusCode != http.StatusOK || len(r.Probs) == 0 || len(r.Probs[0].Top) == 0 {
		t.Fatalf("/completion: %d %v %+v", resp.StatusCode, err, r)
	}
	top := r.Probs[0].Top
	t.Logf("%d prompt tokens; Go's next token %d %q (%.3f); llama.cpp's top: %+v", len(ids), best, tok.Token(int32(best)), lp[best], top)
	if int32(best) != top[0].ID {
		t.Errorf("most likely next token: Go %d %q, llama.cpp %d %q", best, tok.Token(int32(best)), top[0].ID, top[0].Token)
	}
	worst := 0.0
	for _, c := range top {
		d := math.Abs(lp[c.ID] - c.Logprob)
		worst = max(worst, d)
		if d > tol {
			t.Errorf("token %d %q: log-prob Go %.4f, llama.cpp %.4f", c.ID, c.Token, lp[c.ID], c.Logprob)
		}
	}
	t.Logf("largest log-prob difference over llama.cpp's top %d: %.4f", len(top), worst)
}

// TestIntegrationSmolLM2ONNX: SmolLM2's ONNX graph on ONNX Runtime against
// the Go forward pass on the same weights: the log-probs of a chat prompt's
// next token, and of three tokens generated from the cache, to 1e-3.
func TestIntegrationSmolLM2ONNX(t *testing.T) {
	m, tok := llamatest.SmolLM2(t)
	sess, err := llama.NewSession(m.ONNX(), m.Shape, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ids := tok.Encode("<|im_start|>user\nType \"hello\" into the box [4].<|im_end|>\n<|im_start|>assistant\n", true)
	ref, kv := m.NewCache(), sess.NewKV()
	worst := 0.0
	for step := range 4 {
		want, err := m.Forward(ids, ref)
		if err != nil {
			t.Fatal(err)
		}
		got, err := sess.Run(ids, kv)
		if err != nil {
			t.Fatal(err)
		}
		lw, lg := policy.LogSoftmax(want), policy.LogSoftmax(got)
		next := 0
		for i := range lw {
			if lw[i] > -20 { // the tokens that matter: the rest is noise far below
				worst = max(worst, math.Abs(lw[i]-lg[i]))
			}
			if lw[i] > lw[next] {
				next = i
			}
		}
		if worst > 1e-3 {
			t.Fatalf("step %d: log-probs differ by %.2g", step, worst)
		}
		ids = []int32{int32(next)}
	}
	t.Logf("largest log-prob difference over 4 steps: %.2g", worst)
}
