package omp

/*
#cgo CFLAGS: -fopenmp
#cgo LDFLAGS: -fopenmp
#include <omp.h>
*/
import "C"

// SetThreads sets the team size of the parallel regions the calling OS
// thread starts (lock the goroutine to it first). n < 1 is taken as 1.
func SetThreads(n int) { C.omp_set_num_threads(C.int(max(n, 1))) }

// Threads is the team size the calling OS thread's next parallel region
// would have.
func Threads() int { return int(C.omp_get_max_threads()) }
