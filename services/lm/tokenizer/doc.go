// Package tokenizer is a language model's byte-level BPE tokenizer
// (GPT-2's scheme, as SmolLM2, Llama 3 and Qwen use it), built from the
// vocabulary, merges and token types a GGUF file carries, so that the
// in-process model and the prompt agree token for token with the model's
// own tokenizer (tested against Hugging Face's tokenizers and against
// llama.cpp's /tokenize on the same GGUF).
//
// Encoding is the reference's, step by step:
//   - special tokens (the GGUF's control and user-defined tokens:
//     <|im_start|>, <|im_end|>, ...) are cut out first when asked;
//   - the pre-tokenizer splits the rest into words: for pre-tokenizer
//     "smollm", every digit alone, then GPT-2's pattern ('s 't 're 've 'm
//     'll 'd, letters with an optional leading space, numbers likewise,
//     other symbols likewise, whitespace runs not followed by a non-space),
//     written as a scanner because Go's regexp has no look-ahead;
//   - each word's UTF-8 bytes map to GPT-2's printable byte alphabet, and
//     the lowest-ranked adjacent pair is merged until no pair of the merges
//     list is left.
package tokenizer
