package cmalloc

/*
#include <malloc.h>
*/
import "C"

// mmapThreshold: blocks from 1 MB up are mmapped and unmapped when freed;
// smaller ones (most of libtorch's and the runtime's scratch) stay on the
// heap, where reuse is cheap.
const mmapThreshold = 1 << 20

func init() { C.mallopt(C.M_MMAP_THRESHOLD, mmapThreshold) }
