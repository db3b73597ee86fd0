package cmalloc

/*
#include <malloc.h>
#include <stdlib.h>
*/
import "C"

import "unsafe"

// Stats is glibc malloc's account of the C heap (mallinfo2), for the C
// libraries of this process (libtorch, ONNX Runtime) and cgo.
type Stats struct {
	InUse uint64 // bytes handed out and not freed, mmapped blocks included
	Free  uint64 // bytes free inside malloc's heaps: held from the OS, not in use
}

// Read returns the C heap's account now. It walks every arena under its
// lock: cheap, but not for a hot path.
//
// Why: a process's resident memory outside the Go runtime can grow from a
// leak (InUse grows) or from fragmentation of malloc's heaps (Free grows);
// only these two tell them apart.
func Read() Stats {
	m := C.mallinfo2()
	return Stats{InUse: uint64(m.uordblks) + uint64(m.hblkhd), Free: uint64(m.fordblks)}
}

// allocate and release are C's malloc and free, for the test (cgo is not
// allowed in _test files).
func allocate(n int) unsafe.Pointer { return C.malloc(C.size_t(n)) }
func release(p unsafe.Pointer)      { C.free(p) }
