// Package onnxwire writes ONNX models with protowire, without generated
// code: the field numbers of onnx.proto the project uses, tensor, value-info
// and attribute encoders, a graph builder that names each node's output,
// and the model's assembly. The features network (services/policy) and the
// language model's graph (services/lm/llama) are written with it, and
// services/policy's reader reads its field numbers.
package onnxwire
