package actor

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/procstat"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama/llamatest"
)

// TestIntegrationLMSwapKeepsMemory: swapping versions of SmolLM2 into the
// lm backend does not grow the process. Each swap opens an ONNX Runtime
// session of hundreds of 1–4 MB blocks and closes the old one; with
// glibc's dynamic mmap threshold the freed blocks stayed in fragmented
// heaps, about 350 MB a swap (a 47-minute run reached 20 GB), which
// services/internal/cmalloc stops (measured with it: 114 MB over the six
// swaps after the first two). The bound, 400 MB, is a fifth of the leak's
// 2.1 GB.
func TestIntegrationLMSwapKeepsMemory(t *testing.T) {
	m, tok := llamatest.SmolLM2(t)
	sess, err := llama.NewSession(m.ONNX(), m.Shape, 1)
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := tok.ID("<|im_end|>")
	p, err := NewLMPolicy(LMModel{Model: m, Session: sess, Tokenizer: tok, EOS: eos, Threads: 1}, action.SetBid, lm.AnswerAction, 48, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	top := "blk" + strconv.Itoa(m.Shape.Blocks-1) + "."
	var trained []llama.Tensor
	for _, w := range m.Tensors() {
		if strings.HasPrefix(w.Name, top) || w.Name == "output_norm" {
			trained = append(trained, w)
		}
	}
	blob, err := llama.EncodeWeights(trained)
	if err != nil {
		t.Fatal(err)
	}
	var rss []int64
	for v := range 8 {
		if err := p.Swap(context.Background(), blob, uint64(v+1)); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		debug.FreeOSMemory()
		rss = append(rss, int64(procstat.Int(procstat.Stat(os.Getpid()), procstat.RSSPages)*os.Getpagesize())>>20)
	}
	t.Logf("RSS after each swap (MB): %v", rss)
	if grew := rss[len(rss)-1] - rss[1]; grew > 400 {
		t.Errorf("RSS grew %d MB over swaps 3–8", grew)
	}
}
