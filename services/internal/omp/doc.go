// Package omp sets the OpenMP team size of the calling thread. libtorch
// (Debian's, parallel backend OpenMP) and OpenBLAS's OpenMP build both
// size their parallel regions from the calling thread's nthreads ICV, so a
// learner whose training thread owns one core (cpuset.Own) sets it to 1:
// a second worker would share that core and spin at each barrier, and one
// created before the pinning would run on the actors' cores.
package omp
