// Package gguf reads a language model in GGUF, llama.cpp's file format:
// its architecture's hyper-parameters, its tokenizer's vocabulary (for
// package tokenizer) and its tensors. The header is parsed by
// github.com/gpustack/gguf-parser-go; this package names what the lm
// backend needs of it and checks it.
package gguf
