package policy

// Packed is a Features as a learner's replay keeps it: the same values,
// each array that is mostly zeros held as its non-zero entries. Unpack
// gives the Features back exactly.
//
// Why: a sample's arrays are 150 KB with the default architecture, and
// most of that is zeros: the pair features (35 KB, a handful set), the
// cell map (33 KB, one element per cell at most), the candidate mask. A
// replay of 4,096 samples held 600 MB of them, growing for hours as it
// filled (the 2-hour soak of 12-06). Packed, a sample is the frame (49 KB,
// dense) and a few KB beside it: 2,739 transitions of a soak's builtin
// tasks averaged 149.9 KB unpacked, 58.0 KB packed (2.59x).
type Packed struct {
	base Features // every field but the packed arrays, which are nil here
	// arrays are the tensors in InputSpecs order, each a
	// packedArray[float32] or packedArray[int64].
	arrays []any
}

// packedArray is one array: dense when at least half of it is set (the
// frame: a page's area averages take hundreds of values a channel, its
// commonest under half), else its length and its non-zero entries.
type packedArray[T float32 | int64] struct {
	dense []T
	n     int
	idx   []uint32
	val   []T
}

// Pack packs f. The packed value shares f's dense arrays and its strings:
// neither may be written afterwards (the learner never writes a sample's
// features).
func Pack(f *Features) *Packed {
	p := &Packed{base: *f}
	for _, a := range p.base.arrays() {
		switch a := a.(type) {
		case *[]float32:
			p.arrays = append(p.arrays, packArray(*a))
			*a = nil
		case *[]int64:
			p.arrays = append(p.arrays, packArray(*a))
			*a = nil
		}
	}
	return p
}

// Unpack returns the Features p holds: fresh arrays for the sparse ones,
// the shared dense ones (read-only, as Pack says). A batch needs no
// Unpack: Architecture.StackPacked reads p as it is.
func (p *Packed) Unpack() *Features {
	f := p.base
	for i, a := range f.arrays() {
		switch a := a.(type) {
		case *[]float32:
			*a = p.arrays[i].(packedArray[float32]).unpack()
		case *[]int64:
			*a = p.arrays[i].(packedArray[int64]).unpack()
		}
	}
	return &f
}

// Bytes is the memory of p's arrays, as Features.Bytes counts f's.
func (p *Packed) Bytes() int {
	n := 0
	for _, a := range p.arrays {
		switch a := a.(type) {
		case packedArray[float32]:
			n += a.bytes(4)
		case packedArray[int64]:
			n += a.bytes(8)
		}
	}
	return n
}

func packArray[T float32 | int64](x []T) packedArray[T] {
	nz := 0
	for _, v := range x {
		if v != 0 {
			nz++
		}
	}
	if 2*nz >= len(x) {
		return packedArray[T]{dense: x, n: len(x)}
	}
	p := packedArray[T]{n: len(x), idx: make([]uint32, 0, nz), val: make([]T, 0, nz)}
	for i, v := range x {
		if v != 0 {
			p.idx, p.val = append(p.idx, uint32(i)), append(p.val, v)
		}
	}
	return p
}

func (p packedArray[T]) unpack() []T {
	if p.dense != nil || p.n == 0 {
		return p.dense
	}
	x := make([]T, p.n)
	p.put(x)
	return x
}

// put writes the array into dst, which holds zeros and has the array's
// length; false if it has not.
func (p packedArray[T]) put(dst []T) bool {
	if len(dst) != p.n {
		return false
	}
	if p.dense != nil {
		copy(dst, p.dense)
		return true
	}
	for i, j := range p.idx {
		dst[j] = p.val[i]
	}
	return true
}

func (p packedArray[T]) bytes(size int) int {
	if p.dense != nil {
		return size * len(p.dense)
	}
	return 4*len(p.idx) + size*len(p.val)
}
