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

// maxNPZ bounds what ReadNPZ unpacks (bytes), so that no archive can make
// it allocate without end.
const maxNPZ = 1 << 30

// ReadNPZ reads an archive WriteNPZ writes (float32 '<f4' and int64 '<i8'
// C-ordered arrays), in the archive's order; anything else is an error
// naming the array.
func ReadNPZ(b []byte) ([]Input, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("unable to read npz: %w", err)
	}
	var out []Input
	var total uint64
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok || name == "" || strings.ContainsAny(name, "/\\") {
			return nil, fmt.Errorf("unable to read npz: member %q is not NAME.npy", f.Name)
		}
		if total += f.UncompressedSize64; total > maxNPZ {
			return nil, fmt.Errorf("unable to read npz: over %d bytes", maxNPZ)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("unable to read npz array %q: %w", name, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, int64(f.UncompressedSize64)+1))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("unable to read npz array %q: %w", name, err)
		}
		in, err := readNPY(name, data)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// readNPY parses one NPY 1.0 file of npyHeader's form.
func readNPY(name string, b []byte) (Input, error) {
	bad := func(why string) (Input, error) {
		return Input{}, fmt.Errorf("unable to read npz array %q: %s", name, why)
	}
	if len(b) < 10 || string(b[:8]) != "\x93NUMPY\x01\x00" {
		return bad("not an NPY 1.0 file")
	}
	hl := int(b[8]) | int(b[9])<<8
	if 10+hl > len(b) {
		return bad("header runs past the data")
	}
	dict := string(b[10 : 10+hl])
	descr := between(dict, "'descr': '", "'")
	if !strings.Contains(dict, "'fortran_order': False") {
		return bad("not C-ordered")
	}
	var shape []int64
	n := int64(1)
	for _, d := range strings.Split(between(dict, "'shape': (", ")"), ",") {
		if d = strings.TrimSpace(d); d == "" {
			continue
		}
		v, err := strconv.ParseInt(d, 10, 64)
		if err != nil || v < 0 {
			return bad("bad shape")
		}
		shape = append(shape, v)
		n *= v
	}
	data := b[10+hl:]
	in := Input{Name: name, Shape: shape}
	switch descr {
	case "<f4":
		if int64(len(data)) != 4*n {
			return bad(fmt.Sprintf("%d bytes for %d float32 values", len(data), n))
		}
		in.F32 = make([]float32, n)
		_ = binary.Read(bytes.NewReader(data), binary.LittleEndian, in.F32)
	case "<i8":
		if int64(len(data)) != 8*n {
			return bad(fmt.Sprintf("%d bytes for %d int64 values", len(data), n))
		}
		in.I64 = make([]int64, n)
		_ = binary.Read(bytes.NewReader(data), binary.LittleEndian, in.I64)
	default:
		return bad(fmt.Sprintf("dtype %q (want <f4 or <i8)", descr))
	}
	return in, nil
}

// between is the text of s after open up to the next close ("" if absent).
func between(s, open, close string) string {
	i := strings.Index(s, open)
	if i < 0 {
		return ""
	}
	s = s[i+len(open):]
	if j := strings.Index(s, close); j >= 0 {
		return s[:j]
	}
	return ""
}
