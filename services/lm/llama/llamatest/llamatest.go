// Package llamatest loads the real language model for tests of the
// packages that run it (the actor's lm backend, the learner's twin).
package llamatest

import (
	"testing"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
)

// SmolLM2 is the GGUF infra/setup.sh lm fetches (testenv.LMModel: the test
// is skipped where integration tests are), its weights and its tokenizer.
func SmolLM2(t testing.TB) (*llama.Model, *tokenizer.Tokenizer) {
	t.Helper()
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
	return m, tok
}
