package gguf

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
)

// toHalf is float32 v as binary16 (round toward zero; the test's values
// are exact in half precision).
func toHalf(v float32) uint16 {
	b := math.Float32bits(v)
	sign := uint16(b>>16) & 0x8000
	if v == 0 {
		return sign
	}
	exp := int(b>>23&0xff) - 127 + 15
	return sign | uint16(exp)<<10 | uint16(b>>13&0x3ff)
}

// TestHalf: binary16 to float32 on normal, subnormal, signed and special
// values.
func TestHalf(t *testing.T) {
	for h, want := range map[uint16]float32{0x3c00: 1, 0xc000: -2, 0x3555: 0.33325195, 0x0001: 5.9604645e-08, 0x7bff: 65504, 0x8000: 0} {
		if got := half(h); got != want {
			t.Errorf("half(%#04x) = %v, want %v", h, got, want)
		}
	}
	if !math.IsInf(float64(half(0x7c00)), 1) || !math.IsNaN(float64(half(0x7e00))) {
		t.Error("infinity or NaN lost")
	}
}

// TestDequantize: blocks written by hand per the formats decode to the
// values they were written from.
func TestDequantize(t *testing.T) {
	le := binary.LittleEndian
	// Q8_0: d = 0.5, q = j - 16.
	q8 := make([]byte, 34)
	le.PutUint16(q8, toHalf(0.5))
	for j := range 32 {
		q8[2+j] = byte(int8(j - 16))
	}
	// Q4_1: d = 0.25, m = -1, value j is (j mod 16)·d + m, the low nibbles
	// first.
	q4 := make([]byte, 20)
	le.PutUint16(q4, toHalf(0.25))
	le.PutUint16(q4[2:], toHalf(-1))
	for j := range 16 {
		q4[4+j] = byte(j) | byte(15-j)<<4
	}
	f16 := []byte{0x00, 0x3c, 0x00, 0xc0}
	for _, tc := range []struct {
		typ  string
		raw  []byte
		n    int
		want func(j int) float32
	}{
		{"Q8_0", q8, 32, func(j int) float32 { return 0.5 * float32(j-16) }},
		{"Q4_1", q4, 32, func(j int) float32 {
			if j < 16 {
				return 0.25*float32(j) - 1
			}
			return 0.25*float32(15-(j-16)) - 1
		}},
		{"F16", f16, 2, func(j int) float32 { return []float32{1, -2}[j] }},
	} {
		got, err := dequantize(tc.typ, tc.raw, tc.n)
		if err != nil {
			t.Fatalf("%s: %v", tc.typ, err)
		}
		for j, v := range got {
			if v != tc.want(j) {
				t.Errorf("%s value %d: %v, want %v", tc.typ, j, v, tc.want(j))
			}
		}
	}
	if _, err := dequantize("Q5_K", make([]byte, 1000), 256); err == nil {
		t.Error("an unknown type was read")
	}
	if _, err := dequantize("Q4_1", make([]byte, 10), 32); err == nil {
		t.Error("a short block was read")
	}
}

// TestIntegrationSmolLM2: the GGUF setup fetches reads as its model card
// and the GGUF header say (../shared/LM-AND-ANCHORS.md), and every tensor
// of block 0 and the embedding dequantizes to finite values of its shape.
func TestIntegrationSmolLM2(t *testing.T) {
	f, err := Open(testenv.LMModel(t))
	if err != nil {
		t.Fatal(err)
	}
	l, err := f.Llama()
	if err != nil {
		t.Fatal(err)
	}
	if l.Blocks != 30 || l.Width != 576 || l.FeedForward != 1536 || l.Heads != 9 || l.KVHeads != 3 || l.RopeBase != 100000 || l.Vocab != 49152 {
		t.Errorf("shape %+v", l)
	}
	ts := f.Tensors()
	if len(ts) != 272 {
		t.Errorf("%d tensors, want 272", len(ts))
	}
	read := 0
	for _, tn := range ts {
		if tn.Name != "token_embd.weight" && (len(tn.Name) < 6 || tn.Name[:6] != "blk.0.") {
			continue
		}
		v, tt, err := f.Float32(tn.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(v) != tt.Elements() {
			t.Fatalf("%s: %d values for dims %v", tn.Name, len(v), tt.Dims)
		}
		var sum float64
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("%s: a value is not finite", tn.Name)
			}
			sum += float64(x) * float64(x)
		}
		if sum == 0 {
			t.Errorf("%s is all zero", tn.Name)
		}
		read++
		t.Logf("%s %s %v rms %.4f", tn.Name, tt.Type, tt.Dims, math.Sqrt(sum/float64(len(v))))
	}
	if read < 10 {
		t.Errorf("read %d tensors of block 0 and the embedding", read)
	}
}
