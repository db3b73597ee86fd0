package tokenizer_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
)

// corpusSize is how many strings each reference encodes (the issue asks
// for at least 1,000).
const corpusSize = 1200

// model opens the test GGUF (SmolLM2-135M-Instruct) and its tokenizer.
func model(t *testing.T) (*gguf.File, *tokenizer.Tokenizer, tokenizer.Vocab) {
	t.Helper()
	f, err := gguf.Open(testenv.LMModel(t))
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.Vocab()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		t.Fatal(err)
	}
	return f, tok, v
}

// compare fails t on the first strings whose ids differ from want's.
func compare(t *testing.T, tok *tokenizer.Tokenizer, strs []string, want [][]int32, ref string) {
	t.Helper()
	if len(want) != len(strs) {
		t.Fatalf("%s encoded %d strings of %d", ref, len(want), len(strs))
	}
	bad, tokens := 0, 0
	for i, s := range strs {
		got := tok.Encode(s, true)
		tokens += len(got)
		if !equal(got, want[i]) {
			bad++
			if bad <= 5 {
				t.Errorf("%q:\n  go  %v %q\n  %s %v %q", s, got, pieces(tok, got), ref, want[i], pieces(tok, want[i]))
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d strings differ from %s", bad, len(strs), ref)
	}
	t.Logf("%d strings, %d tokens: every one as %s encodes it", len(strs), tokens, ref)
}

func equal(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func pieces(tok *tokenizer.Tokenizer, ids []int32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = tok.Token(id)
	}
	return out
}

// TestIntegrationTokenizerHF: the Go tokenizer against Hugging Face's
// tokenizers (in the analytics/python venv) built from the same GGUF's
// vocabulary and merges the way SmolLM2's tokenizer.json is, token for
// token on corpusSize strings; and every string decodes back to itself.
func TestIntegrationTokenizerHF(t *testing.T) {
	py := testenv.Python(t)
	_, tok, v := model(t)
	special := specials(v)
	strs := corpus(corpusSize, special)
	dir := t.TempDir()
	writeJSON(t, filepath.Join(dir, "vocab.json"), map[string]any{"tokens": v.Tokens, "merges": v.Merges, "special": special, "pre": v.Pre})
	writeJSON(t, filepath.Join(dir, "strings.json"), strs)
	cmd := exec.Command(py, filepath.Join("testdata", "hf_reference.py"), filepath.Join(dir, "vocab.json"), filepath.Join(dir, "strings.json"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hf_reference.py: %v: %s", err, stderr.String())
	}
	var want [][]int32
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	compare(t, tok, strs, want, "tokenizers")
	for _, s := range strs {
		if got := tok.Decode(tok.Encode(s, true)); got != s {
			t.Fatalf("%q decodes back as %q", s, got)
		}
	}
}

func specials(v tokenizer.Vocab) []string {
	var out []string
	for i, ty := range v.Types {
		if ty == 3 || ty == 4 {
			out = append(out, v.Tokens[i])
		}
	}
	return out
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationTokenizerLlamaCpp: the Go tokenizer against llama.cpp's
// own (llama-server's /tokenize, infra/lm-server.sh) on the same GGUF and
// the same strings: the tokenizer the served model reads its prompts with.
func TestIntegrationTokenizerLlamaCpp(t *testing.T) {
	_, tok, v := model(t)
	base, _ := testenv.LMServer(t)
	strs := corpus(corpusSize, specials(v))
	want := make([][]int32, len(strs))
	for i, s := range strs {
		body, _ := json.Marshal(map[string]any{"content": s, "add_special": false, "parse_special": true})
		resp, err := http.Post(base+"/tokenize", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			Tokens []int32 `json:"tokens"`
		}
		err = json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("/tokenize %q: %d %v", s, resp.StatusCode, err)
		}
		want[i] = r.Tokens
	}
	compare(t, tok, strs, want, "llama.cpp")
}
