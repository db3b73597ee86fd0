// Package cmalloc fixes glibc malloc's threshold for serving an allocation
// by mmap, for the C libraries this process loads (ONNX Runtime, libtorch).
// Import it for its init.
//
// Why: glibc raises that threshold each time a large mmapped block is
// freed (up to 32 MB), so later blocks of a few megabytes come from its
// heaps instead, and heaps fragment and are rarely given back. ONNX
// Runtime allocates a language model's weights as hundreds of 1–4 MB
// blocks on every session, and the lm backend opens a session for every
// version: with the dynamic threshold an actor's RSS grew about 350 MB a
// version (11 GB to 20 GB over 26 versions of SmolLM2 in a 47-minute run on
// 12-05); with a fixed 1 MB threshold it stays flat (8 versions: 2.00 GB
// to 2.14 GB, against 2.40 GB to 4.85 GB).
package cmalloc
