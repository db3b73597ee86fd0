package learner

import (
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
)

// TestVersionBytes: a language model's version weighs its top blocks and
// the output norm as float32, counted by hand for the model's shape, and
// the encoded blob is no larger than that and the margin weightsMaxBytes
// leaves (it may be smaller: the .npz is deflated).
func TestVersionBytes(t *testing.T) {
	s := gguf.Llama{Blocks: 3, Width: 32, FeedForward: 48, Heads: 4, KVHeads: 2, RopeDims: 8, Context: 64, Vocab: 50, RopeBase: 10000, NormEps: 1e-5}
	m := llama.Random(s, 9)
	w, ff, kvw := 32, 48, 2*32/4
	block := w + w*w + kvw*w + kvw*w + w*w + w + ff*w + ff*w + w*ff
	for _, train := range []int{0, 1, 3} {
		c := LMConfig{Model: m, TrainBlocks: train}
		want := 4 * train * block
		if train > 0 {
			want += 4 * w
		}
		if got := c.versionBytes(); got != want {
			t.Errorf("train %d: versionBytes = %d, want %d", train, got, want)
		}
		var ts []llama.Tensor
		for _, x := range m.Tensors() {
			if lmTrainable(s.Blocks, train, x.Name) {
				ts = append(ts, x)
			}
		}
		blob, err := llama.EncodeWeights(ts)
		if err != nil {
			t.Fatal(err)
		}
		if d := len(blob) - want; d > 64<<10 {
			t.Errorf("train %d: the encoded version is %d bytes, %d over the count; the topic's margin is 64 KiB", train, len(blob), d)
		}
	}
}

// TestFatalPublish: a version too large for the topic stops the learner,
// whether the learner saw it first or franz-go refused it; a transient
// error does not.
func TestFatalPublish(t *testing.T) {
	for _, c := range []struct {
		err   error
		fatal bool
	}{
		{fmt.Errorf("unable to publish weights version 3: %w", &VersionTooLargeError{Bytes: 70 << 20, Max: weightsMaxBytes}), true},
		{fmt.Errorf("unable to publish weights version 3: %w", errors.Join(kerr.MessageTooLarge, errors.New("abort ok"))), true},
		{fmt.Errorf("unable to publish weights version 3: %w", kerr.RecordListTooLarge), true},
		{fmt.Errorf("unable to publish weights version 3: %w", errFenced), true},
		{fmt.Errorf("unable to publish weights version 3: %w", kerr.NotEnoughReplicas), false},
		{fmt.Errorf("unable to publish weights version 3: %w", kerr.RequestTimedOut), false},
	} {
		if got := fatalPublish(c.err); got != c.fatal {
			t.Errorf("fatalPublish(%v) = %v, want %v", c.err, got, c.fatal)
		}
	}
	e := &VersionTooLargeError{Bytes: 52418600, Max: weightsMaxBytes}
	if got, want := e.Error(), "the version's record is 50.0 MiB, more than the weights topic takes (63.9 MiB): train a smaller part of the model (fewer -lm-train-blocks)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
