package llama

import (
	"errors"
	"fmt"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/asyncwebrl/asyncwebrl/services/lm/gguf"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// Session runs the model's ONNX graph on ONNX Runtime.
type Session struct {
	shape gguf.Llama
	sess  *ort.DynamicAdvancedSession
	tap   int // the graph's tap block (ONNXTap), 0: none
}

// KV is a sequence's cache for the Session: each block's keys and values,
// [kv heads][positions][head dim] flat, and how many positions they hold.
type KV struct {
	keys, values [][]float32
	n            int
}

// Len is how many positions the cache holds.
func (c *KV) Len() int { return c.n }

// NewSession loads onnx (Model.ONNX) for a model of shape s, on threads
// intra-op threads (0: ONNX Runtime's choice).
func NewSession(onnx []byte, s gguf.Llama, threads int) (*Session, error) {
	return NewTapSession(onnx, s, threads, 0)
}

// NewTapSession loads a graph of Model.ONNXTap(tap): Hidden then gives the
// tapped hidden states as well. tap 0 is NewSession.
func NewTapSession(onnx []byte, s gguf.Llama, threads, tap int) (*Session, error) {
	if tap < 0 || tap >= s.Blocks {
		return nil, fmt.Errorf("unable to tap the language model after block %d of %d", tap, s.Blocks)
	}
	if err := policy.InitRuntime(""); err != nil {
		return nil, err
	}
	so, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("unable to create session options: %w", err)
	}
	defer so.Destroy()
	if threads > 0 {
		if err := so.SetIntraOpNumThreads(threads); err != nil {
			return nil, fmt.Errorf("unable to set intra-op threads: %w", err)
		}
	}
	ins := []string{InputIDs}
	outs := []string{OutLogits}
	for i := range s.Blocks {
		ins = append(ins, PastKey(i), PastValue(i))
		outs = append(outs, PresentKey(i), PresentValue(i))
	}
	if tap > 0 {
		outs = append(outs, OutHidden)
	}
	sess, err := ort.NewDynamicAdvancedSessionWithONNXData(onnx, ins, outs, so)
	if err != nil {
		return nil, fmt.Errorf("unable to load the language model into ONNX Runtime: %w", err)
	}
	return &Session{shape: s, sess: sess, tap: tap}, nil
}

// NewKV is an empty cache.
func (s *Session) NewKV() *KV {
	return &KV{keys: make([][]float32, s.shape.Blocks), values: make([][]float32, s.shape.Blocks)}
}

// Run feeds ids after the cache's positions and returns the next-token
// logits after the last; the cache then holds the new positions too.
func (s *Session) Run(ids []int32, c *KV) ([]float32, error) {
	logits, _, err := s.Hidden(ids, c)
	return logits, err
}

// Tap is the session's tap block (0: none).
func (s *Session) Tap() int { return s.tap }

// Hidden is Run that also returns, on a tapped session, the hidden states
// after the tap block for each of ids ([len(ids)][width] flat; nil
// untapped).
func (s *Session) Hidden(ids []int32, c *KV) (logits, hidden []float32, err error) {
	if len(ids) == 0 {
		return nil, nil, errors.New("unable to run the language model on no tokens")
	}
	sh := s.shape
	hd := int64(sh.Width / sh.Heads)
	kvh := int64(sh.KVHeads)
	var values []ort.Value
	defer func() {
		for _, v := range values {
			if v != nil {
				v.Destroy()
			}
		}
	}()
	ids64 := make([]int64, len(ids))
	for i, id := range ids {
		if id < 0 || int(id) >= sh.Vocab {
			return nil, nil, fmt.Errorf("token id %d outside the vocabulary of %d", id, sh.Vocab)
		}
		ids64[i] = int64(id)
	}
	in, err := ort.NewTensor(ort.NewShape(int64(len(ids))), ids64)
	if err != nil {
		return nil, nil, fmt.Errorf("unable to create the input ids: %w", err)
	}
	values = append(values, in)
	for i := range sh.Blocks {
		for _, data := range [][]float32{c.keys[i], c.values[i]} {
			t, err := ort.NewTensor(ort.NewShape(kvh, int64(c.n), hd), append([]float32(nil), data...))
			if err != nil {
				return nil, nil, fmt.Errorf("unable to create the cache's input: %w", err)
			}
			values = append(values, t)
		}
	}
	nOut := 1 + 2*sh.Blocks
	if s.tap > 0 {
		nOut++ // OutHidden, last
	}
	outs := make([]ort.Value, nOut)
	if err := s.sess.Run(values, outs); err != nil {
		for _, v := range outs {
			if v != nil {
				v.Destroy()
			}
		}
		return nil, nil, fmt.Errorf("unable to run the language model: %w", err)
	}
	values = append(values, outs...)
	floats := func(v ort.Value) ([]float32, error) {
		t, ok := v.(*ort.Tensor[float32])
		if !ok {
			return nil, fmt.Errorf("output of type %T, want float32", v)
		}
		return append([]float32(nil), t.GetData()...), nil
	}
	if logits, err = floats(outs[0]); err != nil {
		return nil, nil, err
	}
	if s.tap > 0 {
		if hidden, err = floats(outs[1+2*sh.Blocks]); err != nil {
			return nil, nil, err
		}
	}
	for i := range sh.Blocks {
		if c.keys[i], err = floats(outs[1+2*i]); err != nil {
			return nil, nil, err
		}
		if c.values[i], err = floats(outs[2+2*i]); err != nil {
			return nil, nil, err
		}
	}
	c.n += len(ids)
	return logits, hidden, nil
}

// Close releases the session.
func (s *Session) Close() error { return s.sess.Destroy() }

// Clone is a copy of c that grows on its own (a cached prompt prefix
// shared by every decision).
func (c *KV) Clone() *KV {
	out := &KV{keys: make([][]float32, len(c.keys)), values: make([][]float32, len(c.values)), n: c.n}
	for i := range c.keys {
		out.keys[i] = append([]float32(nil), c.keys[i]...)
		out.values[i] = append([]float32(nil), c.values[i]...)
	}
	return out
}

// Shape is the model's shape.
func (s *Session) Shape() gguf.Llama { return s.shape }
