package llama

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// Tensor is one named weight: its shape (rows first: a projection is
// [out, in]) and values.
type Tensor struct {
	Name  string
	Shape []int64
	Data  []float32
}

// Tensors lists the model's weights by name, in a fixed order: "embed",
// "output_norm", "output" (only when not tied), then per block i
// "blk<i>.attn_norm", ".q", ".k", ".v", ".o", ".ffn_norm", ".gate", ".up",
// ".down". The slices are the model's own.
func (m *Model) Tensors() []Tensor {
	s := m.Shape
	w, ff, kvw := int64(s.Width), int64(s.FeedForward), int64(s.KVHeads*s.Width/s.Heads)
	out := []Tensor{{"embed", []int64{int64(s.Vocab), w}, m.embed}, {"output_norm", []int64{w}, m.norm}}
	if &m.output[0] != &m.embed[0] {
		out = append(out, Tensor{"output", []int64{int64(s.Vocab), w}, m.output})
	}
	for i, b := range m.blocks {
		p := "blk" + strconv.Itoa(i) + "."
		out = append(out,
			Tensor{p + "attn_norm", []int64{w}, b.attnNorm}, Tensor{p + "q", []int64{w, w}, b.q},
			Tensor{p + "k", []int64{kvw, w}, b.k}, Tensor{p + "v", []int64{kvw, w}, b.v}, Tensor{p + "o", []int64{w, w}, b.o},
			Tensor{p + "ffn_norm", []int64{w}, b.ffnNorm}, Tensor{p + "gate", []int64{ff, w}, b.gate},
			Tensor{p + "up", []int64{ff, w}, b.up}, Tensor{p + "down", []int64{w, ff}, b.down})
	}
	return out
}

// SetTensors replaces the weights named in ts (a trained subset: the top
// blocks), checking each name and size.
func (m *Model) SetTensors(ts []Tensor) error {
	byName := map[string]*[]float32{"embed": &m.embed, "output_norm": &m.norm}
	for i := range m.blocks {
		b := &m.blocks[i]
		p := "blk" + strconv.Itoa(i) + "."
		for name, dst := range map[string]*[]float32{"attn_norm": &b.attnNorm, "q": &b.q, "k": &b.k, "v": &b.v, "o": &b.o,
			"ffn_norm": &b.ffnNorm, "gate": &b.gate, "up": &b.up, "down": &b.down} {
			byName[p+name] = dst
		}
	}
	for _, t := range ts {
		dst, ok := byName[t.Name]
		if !ok {
			return fmt.Errorf("unable to set weight %q: the model has none of that name", t.Name)
		}
		if len(t.Data) != len(*dst) {
			return fmt.Errorf("unable to set weight %q: %d values, want %d", t.Name, len(t.Data), len(*dst))
		}
		tied := t.Name == "embed" && &m.output[0] == &m.embed[0]
		*dst = append([]float32(nil), t.Data...)
		if tied {
			m.output = m.embed
		}
	}
	return nil
}

// WeightsFormat is Weights.format of a language model's published version:
// its trained tensors (Tensors' names) as a NumPy .npz archive.
const WeightsFormat = "lm-tensors-npz"

// EncodeWeights is ts as WeightsFormat.
func EncodeWeights(ts []Tensor) ([]byte, error) {
	arrays := make([]policy.Input, len(ts))
	for i, t := range ts {
		arrays[i] = policy.Input{Name: t.Name, Shape: t.Shape, F32: t.Data}
	}
	var b bytes.Buffer
	if err := policy.WriteNPZ(&b, arrays); err != nil {
		return nil, fmt.Errorf("unable to encode the language model's weights: %w", err)
	}
	return b.Bytes(), nil
}

// DecodeWeights reads EncodeWeights' bytes.
func DecodeWeights(b []byte) ([]Tensor, error) {
	arrays, err := policy.ReadNPZ(b)
	if err != nil {
		return nil, fmt.Errorf("unable to decode the language model's weights: %w", err)
	}
	out := make([]Tensor, len(arrays))
	for i, a := range arrays {
		if a.F32 == nil {
			return nil, fmt.Errorf("unable to decode the language model's weights: %q is not float32", a.Name)
		}
		out[i] = Tensor{Name: a.Name, Shape: a.Shape, Data: a.F32}
	}
	return out, nil
}

// Clone is a copy of m whose weights can be set without touching m's. It
// shares m's slices: SetTensors replaces a weight's slice, never writes
// into it, so a version costs only the weights it changes.
func (m *Model) Clone() *Model {
	c := *m
	c.blocks = append([]block(nil), m.blocks...)
	return &c
}
