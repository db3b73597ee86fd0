package policy

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteNPZ writes arrays as a NumPy .npz archive (a zip of NPY 1.0 files,
// one per array, named NAME.npy): float32 as '<f4', int64 as '<i8', each
// C-ordered with its Shape. It is how `asyncwebrl policy features` hands a
// feature batch to Python (numpy.load reads it; so does any tool that
// reads NumPy files), so nothing outside Go needs the featurizer.
func WriteNPZ(w io.Writer, arrays []Input) error {
	zw := zip.NewWriter(w)
	for _, a := range arrays {
		if a.Name == "" || strings.ContainsAny(a.Name, "/\\") {
			return fmt.Errorf("unable to write npz: bad array name %q", a.Name)
		}
		n := int64(1)
		for _, d := range a.Shape {
			n *= d
		}
		descr, size := "<f4", len(a.F32)
		if a.F32 == nil {
			descr, size = "<i8", len(a.I64)
		}
		if int64(size) != n {
			return fmt.Errorf("unable to write npz: array %q has %d values for shape %v", a.Name, size, a.Shape)
		}
		f, err := zw.CreateHeader(&zip.FileHeader{Name: a.Name + ".npy", Method: zip.Deflate})
		if err != nil {
			return fmt.Errorf("unable to write npz: %w", err)
		}
		if _, err := f.Write(npyHeader(descr, a.Shape)); err != nil {
			return fmt.Errorf("unable to write npz: %w", err)
		}
		var data any = a.F32
		if a.F32 == nil {
			data = a.I64
		}
		if err := binary.Write(f, binary.LittleEndian, data); err != nil {
			return fmt.Errorf("unable to write npz: %w", err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("unable to write npz: %w", err)
	}
	return nil
}

// npyHeader is the NPY 1.0 preamble: magic, version, header length and a
// Python dict literal padded with spaces to a multiple of 64 bytes, ending
// in a newline (the format's rule, so the data is aligned).
func npyHeader(descr string, shape []int64) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	tuple := "(" + strings.Join(dims, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	tuple += ")"
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, tuple)
	const pre = 10 // magic (6) + version (2) + header length (2)
	pad := 64 - (pre+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	hl := len(dict) + pad + 1
	b.WriteByte(byte(hl))
	b.WriteByte(byte(hl >> 8))
	b.WriteString(dict)
	b.WriteString(strings.Repeat(" ", pad))
	b.WriteByte('\n')
	return b.Bytes()
}
