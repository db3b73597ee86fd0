package gguf

import (
	"fmt"

	parser "github.com/gpustack/gguf-parser-go"

	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
)

// Llama is a llama-architecture model's shape (the GGUF's llama.* keys).
type Llama struct {
	Blocks, Width, FeedForward int
	Heads, KVHeads, RopeDims   int
	Context, Vocab             int
	RopeBase, NormEps          float64
}

// File is an opened GGUF file's header.
type File struct {
	Path string
	f    *parser.GGUFFile
}

// Open parses path's header (metadata and tensor table; the tensors stay
// on disk).
func Open(path string) (*File, error) {
	f, err := parser.ParseGGUFFile(path)
	if err != nil {
		return nil, fmt.Errorf("unable to read GGUF %s: %w", path, err)
	}
	return &File{Path: path, f: f}, nil
}

// String is a metadata string ("" when absent).
func (f *File) String(key string) string {
	kv, ok := f.f.Header.MetadataKV.Get(key)
	if !ok || kv.ValueType != parser.GGUFMetadataValueTypeString {
		return ""
	}
	return kv.ValueString()
}

// num is a numeric metadata value, or an error naming the key.
func (f *File) num(key string) (float64, error) {
	kv, ok := f.f.Header.MetadataKV.Get(key)
	if !ok {
		return 0, fmt.Errorf("GGUF %s has no %s", f.Path, key)
	}
	switch kv.ValueType {
	case parser.GGUFMetadataValueTypeUint8, parser.GGUFMetadataValueTypeInt8, parser.GGUFMetadataValueTypeUint16,
		parser.GGUFMetadataValueTypeInt16, parser.GGUFMetadataValueTypeUint32, parser.GGUFMetadataValueTypeInt32,
		parser.GGUFMetadataValueTypeUint64, parser.GGUFMetadataValueTypeInt64,
		parser.GGUFMetadataValueTypeFloat32, parser.GGUFMetadataValueTypeFloat64:
		return parser.ValueNumeric[float64](kv), nil
	}
	return 0, fmt.Errorf("GGUF %s: %s is a %s, not a number", f.Path, key, kv.ValueType)
}

// Llama is the model's shape; an error when it is not a llama model.
func (f *File) Llama() (Llama, error) {
	if a := f.String("general.architecture"); a != "llama" {
		return Llama{}, fmt.Errorf("GGUF %s: architecture %q (want llama)", f.Path, a)
	}
	var l Llama
	for _, p := range []struct {
		key string
		i   *int
		f   *float64
	}{
		{"llama.block_count", &l.Blocks, nil}, {"llama.embedding_length", &l.Width, nil},
		{"llama.feed_forward_length", &l.FeedForward, nil}, {"llama.attention.head_count", &l.Heads, nil},
		{"llama.attention.head_count_kv", &l.KVHeads, nil}, {"llama.rope.dimension_count", &l.RopeDims, nil},
		{"llama.context_length", &l.Context, nil}, {"llama.vocab_size", &l.Vocab, nil},
		{"llama.rope.freq_base", nil, &l.RopeBase}, {"llama.attention.layer_norm_rms_epsilon", nil, &l.NormEps},
	} {
		v, err := f.num(p.key)
		if err != nil {
			return Llama{}, err
		}
		if p.i != nil {
			*p.i = int(v)
		} else {
			*p.f = v
		}
	}
	if l.Heads == 0 || l.Width%l.Heads != 0 || l.KVHeads == 0 || l.Heads%l.KVHeads != 0 {
		return Llama{}, fmt.Errorf("GGUF %s: %d heads, %d KV heads for width %d", f.Path, l.Heads, l.KVHeads, l.Width)
	}
	return l, nil
}

// Vocab is the tokenizer's vocabulary, merges and token types.
func (f *File) Vocab() (tokenizer.Vocab, error) {
	v := tokenizer.Vocab{Model: f.String("tokenizer.ggml.model"), Pre: f.String("tokenizer.ggml.pre")}
	strs := func(key string) ([]string, error) {
		kv, ok := f.f.Header.MetadataKV.Get(key)
		if !ok || kv.ValueType != parser.GGUFMetadataValueTypeArray {
			return nil, fmt.Errorf("GGUF %s has no array %s", f.Path, key)
		}
		a := kv.ValueArray()
		if a.Type != parser.GGUFMetadataValueTypeString {
			return nil, fmt.Errorf("GGUF %s: %s holds %s, not strings", f.Path, key, a.Type)
		}
		return a.ValuesString(), nil
	}
	var err error
	if v.Tokens, err = strs("tokenizer.ggml.tokens"); err != nil {
		return v, err
	}
	if v.Merges, err = strs("tokenizer.ggml.merges"); err != nil {
		return v, err
	}
	if kv, ok := f.f.Header.MetadataKV.Get("tokenizer.ggml.token_type"); ok && kv.ValueType == parser.GGUFMetadataValueTypeArray {
		v.Types = parser.ValuesNumeric[int32](kv.ValueArray())
	}
	bos, err := f.num("tokenizer.ggml.bos_token_id")
	if err != nil {
		return v, err
	}
	eos, err := f.num("tokenizer.ggml.eos_token_id")
	if err != nil {
		return v, err
	}
	v.BOS, v.EOS = int32(bos), int32(eos)
	return v, nil
}

// Tokenizer is the file's tokenizer.
func (f *File) Tokenizer() (*tokenizer.Tokenizer, error) {
	v, err := f.Vocab()
	if err != nil {
		return nil, err
	}
	return tokenizer.New(v)
}
