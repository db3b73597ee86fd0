package policy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
)

// TestWriteNPZ reads the archive back by the NPY 1.0 rules numpy.load
// applies: magic and version, a little-endian header length, a dict
// literal with dtype, order and shape, padded so the data starts at a
// multiple of 64 bytes, then the values.
func TestWriteNPZ(t *testing.T) {
	arrays := []Input{
		{Name: "frame", Shape: []int64{2, 3}, F32: []float32{0, -1.5, 2, float32(math.Pi), 5, 6}},
		{Name: "tokens", Shape: []int64{4}, I64: []int64{1, -2, 1 << 40, 0}},
	}
	var buf bytes.Buffer
	if err := WriteNPZ(&buf, arrays); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 2 || zr.File[0].Name != "frame.npy" || zr.File[1].Name != "tokens.npy" {
		t.Fatalf("archive holds %v", zr.File)
	}
	wantHeaders := []string{
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
		"{'descr': '<i8', 'fortran_order': False, 'shape': (4,), }",
	}
	for i, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("\x93NUMPY\x01\x00")) {
			t.Fatalf("%s: no NPY 1.0 magic", f.Name)
		}
		hl := int(binary.LittleEndian.Uint16(b[8:10]))
		if (10+hl)%64 != 0 || b[10+hl-1] != '\n' {
			t.Fatalf("%s: header of %d bytes does not end a 64-byte block with a newline", f.Name, hl)
		}
		if got := strings.TrimRight(string(b[10:10+hl]), " \n"); got != wantHeaders[i] {
			t.Fatalf("%s: header %q, want %q", f.Name, got, wantHeaders[i])
		}
		data := b[10+hl:]
		switch i {
		case 0:
			for j, v := range arrays[0].F32 {
				if got := math.Float32frombits(binary.LittleEndian.Uint32(data[4*j:])); got != v {
					t.Fatalf("frame[%d] = %v, want %v", j, got, v)
				}
			}
			if len(data) != 4*6 {
				t.Fatalf("frame: %d data bytes, want 24", len(data))
			}
		case 1:
			for j, v := range arrays[1].I64 {
				if got := int64(binary.LittleEndian.Uint64(data[8*j:])); got != v {
					t.Fatalf("tokens[%d] = %v, want %v", j, got, v)
				}
			}
			if len(data) != 8*4 {
				t.Fatalf("tokens: %d data bytes, want 32", len(data))
			}
		}
	}
}

func TestWriteNPZRejectsBadArrays(t *testing.T) {
	for _, a := range []Input{
		{Name: "short", Shape: []int64{2, 2}, F32: []float32{1, 2, 3}},
		{Name: "", Shape: []int64{1}, I64: []int64{1}},
		{Name: "a/b", Shape: []int64{1}, I64: []int64{1}},
	} {
		if err := WriteNPZ(io.Discard, []Input{a}); err == nil {
			t.Errorf("WriteNPZ(%+v) succeeded, want an error", a)
		}
	}
}

// TestNPZRoundTrip: ReadNPZ reads back what WriteNPZ writes, arrays of
// every rank, in order; a damaged archive is an error, not a panic.
func TestNPZRoundTrip(t *testing.T) {
	in := []Input{{Name: "a", Shape: []int64{2, 3}, F32: []float32{1, 2, 3, 4, 5, 6.5}}, {Name: "b", Shape: []int64{4}, I64: []int64{-1, 0, 1, 1 << 40}},
		{Name: "s", Shape: []int64{}, F32: []float32{7}}, {Name: "e", Shape: []int64{0, 5}, F32: []float32{}}}
	var buf bytes.Buffer
	if err := WriteNPZ(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadNPZ(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out) != fmt.Sprint(in) {
		t.Fatalf("read %v, wrote %v", out, in)
	}
	for _, n := range []int{0, 10, buf.Len() / 2} {
		if _, err := ReadNPZ(buf.Bytes()[:n]); err == nil {
			t.Errorf("a %d-byte prefix was read", n)
		}
	}
}

// FuzzReadNPZ: no input panics.
func FuzzReadNPZ(f *testing.F) {
	var buf bytes.Buffer
	_ = WriteNPZ(&buf, []Input{{Name: "a", Shape: []int64{2}, F32: []float32{1, 2}}})
	f.Add(buf.Bytes())
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ReadNPZ(b) })
}
