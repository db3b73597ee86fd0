package gguf

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"

	parser "github.com/gpustack/gguf-parser-go"
)

// Tensor is one tensor's entry in the file: its shape as GGUF writes it
// (Dims[0] the fastest-varying: a row's length) and its storage type.
type Tensor struct {
	Name string
	Type string
	Dims []int
}

// Elements is the tensor's number of values.
func (t Tensor) Elements() int {
	n := 1
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Tensors lists the file's tensors in file order.
func (f *File) Tensors() []Tensor {
	out := make([]Tensor, len(f.f.TensorInfos))
	for i, ti := range f.f.TensorInfos {
		out[i] = Tensor{Name: ti.Name, Type: ti.Type.String(), Dims: dims(ti.Dimensions)}
	}
	return out
}

func dims(d []uint64) []int {
	out := make([]int, len(d))
	for i, v := range d {
		out[i] = int(v)
	}
	return out
}

// Float32 reads tensor name and dequantizes it to float32, row-major with
// Dims[0] fastest (GGUF's order). Stored as F32, F16, Q8_0 or Q4_1 (the
// types of the quantisations this project reads); another type is an
// error naming it.
func (f *File) Float32(name string) ([]float32, Tensor, error) {
	var ti *parser.GGUFTensorInfo
	for i := range f.f.TensorInfos {
		if f.f.TensorInfos[i].Name == name {
			ti = &f.f.TensorInfos[i]
			break
		}
	}
	if ti == nil {
		return nil, Tensor{}, fmt.Errorf("GGUF %s has no tensor %s", f.Path, name)
	}
	t := Tensor{Name: ti.Name, Type: ti.Type.String(), Dims: dims(ti.Dimensions)}
	n := t.Elements()
	size := int64(ti.Type.RowSizeOf(ti.Dimensions))
	fh, err := os.Open(f.Path)
	if err != nil {
		return nil, t, fmt.Errorf("unable to read tensor %s: %w", name, err)
	}
	defer fh.Close()
	raw := make([]byte, size)
	if _, err := fh.ReadAt(raw, f.f.TensorDataStartOffset+int64(ti.Offset)); err != nil && err != io.EOF {
		return nil, t, fmt.Errorf("unable to read tensor %s: %w", name, err)
	}
	out, err := dequantize(t.Type, raw, n)
	if err != nil {
		return nil, t, fmt.Errorf("unable to read tensor %s: %w", name, err)
	}
	return out, t, nil
}

// dequantize turns n values stored as typ in raw into float32s.
func dequantize(typ string, raw []byte, n int) ([]float32, error) {
	out := make([]float32, n)
	need := map[string]int{"F32": 4 * n, "F16": 2 * n, "Q8_0": n / 32 * 34, "Q4_1": n / 32 * 20}
	want, ok := need[typ]
	if !ok {
		return nil, fmt.Errorf("storage type %s (want F32, F16, Q8_0 or Q4_1)", typ)
	}
	if (typ == "Q8_0" || typ == "Q4_1") && n%32 != 0 {
		return nil, fmt.Errorf("%d values of %s, not whole blocks of 32", n, typ)
	}
	if len(raw) < want {
		return nil, fmt.Errorf("%d bytes for %d values of %s (want %d)", len(raw), n, typ, want)
	}
	le := binary.LittleEndian
	switch typ {
	case "F32":
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
	case "F16":
		for i := range out {
			out[i] = half(le.Uint16(raw[2*i:]))
		}
	case "Q8_0":
		// Blocks of 32: a half scale d, then 32 signed bytes: x = d·q.
		for b := range n / 32 {
			blk := raw[34*b:]
			d := half(le.Uint16(blk))
			for j := range 32 {
				out[32*b+j] = d * float32(int8(blk[2+j]))
			}
		}
	case "Q4_1":
		// Blocks of 32: a half scale d and minimum m, then 16 bytes whose
		// low nibbles are values 0..15 and high nibbles values 16..31:
		// x = d·q + m.
		for b := range n / 32 {
			blk := raw[20*b:]
			d, m := half(le.Uint16(blk)), half(le.Uint16(blk[2:]))
			for j := range 16 {
				q := blk[4+j]
				out[32*b+j] = d*float32(q&0x0f) + m
				out[32*b+j+16] = d*float32(q>>4) + m
			}
		}
	}
	return out, nil
}

// half is IEEE 754 binary16 h as a float32.
func half(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h & 0x3ff)
	switch {
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac · 2^-24
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | frac<<13)
}
