// Package llama is the llama architecture's forward pass in plain Go,
// float32, on the weights of a GGUF file (package gguf): token embedding,
// per block RMSNorm, grouped-query attention with rotary positions (the
// GGUF convention: adjacent pairs rotate, the converter having permuted
// Q and K) and a causal mask, RMSNorm, the SwiGLU feed-forward, and the
// output projection (the embedding when tied).
//
// It is the reference, not the runtime: every faster form of the model
// (the ONNX graph the actors run, the learner's torch twin) is held to its
// log-probs, and it is held to llama.cpp's on the same file. A cache of
// past keys and values makes generation one position at a time.
package llama
