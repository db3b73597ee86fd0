package tokenizer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Token types of a GGUF vocabulary (llama.cpp's llama_token_type).
const (
	typeNormal      = 1
	typeUnknown     = 2
	typeControl     = 3
	typeUserDefined = 4
	typeUnused      = 5
	typeByte        = 6
)

// Vocab is what a GGUF file says of its tokenizer.
type Vocab struct {
	// Model is tokenizer.ggml.model ("gpt2": byte-level BPE) and Pre
	// tokenizer.ggml.pre (the pre-tokenizer: "smollm", ...).
	Model, Pre string
	Tokens     []string
	Types      []int32
	Merges     []string
	BOS, EOS   int32
}

// Tokenizer encodes text to token ids and back. It is safe for concurrent
// use.
type Tokenizer struct {
	tokens  []string
	ids     map[string]int32
	ranks   map[string]int // "left right" → merge rank
	special []string       // control and user-defined texts, longest first
	isSpec  map[int32]bool
	pre     func(string, []string) []string
	bos     int32
	eos     int32

	mu    sync.Mutex
	cache map[string][]int32 // word → ids, bounded
}

// maxCache bounds the word cache (entries).
const maxCache = 1 << 16

// New builds the tokenizer of v. Only byte-level BPE ("gpt2") with the
// pre-tokenizers written here is known; another is an error naming it.
func New(v Vocab) (*Tokenizer, error) {
	if v.Model != "gpt2" {
		return nil, fmt.Errorf("unable to build the tokenizer: model %q (want gpt2, byte-level BPE)", v.Model)
	}
	t := &Tokenizer{tokens: v.Tokens, ids: make(map[string]int32, len(v.Tokens)), ranks: make(map[string]int, len(v.Merges)),
		bos: v.BOS, eos: v.EOS, cache: map[string][]int32{}, isSpec: map[int32]bool{}}
	switch v.Pre {
	case "smollm":
		t.pre = preSmolLM
	case "gpt2", "default", "":
		t.pre = preGPT2
	default:
		return nil, fmt.Errorf("unable to build the tokenizer: pre-tokenizer %q (want smollm or gpt2)", v.Pre)
	}
	if len(v.Tokens) == 0 {
		return nil, errors.New("unable to build the tokenizer: no tokens")
	}
	if len(v.Types) != 0 && len(v.Types) != len(v.Tokens) {
		return nil, fmt.Errorf("unable to build the tokenizer: %d token types for %d tokens", len(v.Types), len(v.Tokens))
	}
	for i, s := range v.Tokens {
		if _, dup := t.ids[s]; !dup {
			t.ids[s] = int32(i)
		}
		if len(v.Types) != 0 && (v.Types[i] == typeControl || v.Types[i] == typeUserDefined) && s != "" {
			t.special = append(t.special, s)
			t.isSpec[int32(i)] = true
		}
	}
	slices.SortStableFunc(t.special, func(a, b string) int { return len(b) - len(a) })
	for i, m := range v.Merges {
		if strings.Count(m, " ") != 1 {
			return nil, fmt.Errorf("unable to build the tokenizer: merge %d %q is not two symbols", i, m)
		}
		if _, dup := t.ranks[m]; !dup {
			t.ranks[m] = i
		}
	}
	// Some vocabularies leave out bytes no text has (SmolLM2 lacks a few
	// control bytes): a symbol without a token is dropped, as Hugging
	// Face's BPE without an unknown token drops it.
	return t, nil
}

// Len is the vocabulary's size; BOS and EOS its begin and end tokens.
func (t *Tokenizer) Len() int   { return len(t.tokens) }
func (t *Tokenizer) BOS() int32 { return t.bos }
func (t *Tokenizer) EOS() int32 { return t.eos }

// ID is the id of token text s (a special token's text, or a token in the
// byte alphabet).
func (t *Tokenizer) ID(s string) (int32, bool) {
	id, ok := t.ids[s]
	return id, ok
}

// Encode is text's ids. With special, the special tokens' texts in text are
// those tokens (a chat template's <|im_start|>); without, they are text.
func (t *Tokenizer) Encode(text string, special bool) []int32 {
	var out []int32
	if !special || len(t.special) == 0 {
		return t.encodeText(text, out)
	}
	for len(text) > 0 {
		at, tok := -1, ""
		for _, s := range t.special {
			if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
				at, tok = i, s
			}
		}
		if at < 0 {
			return t.encodeText(text, out)
		}
		out = t.encodeText(text[:at], out)
		out = append(out, t.ids[tok])
		text = text[at+len(tok):]
	}
	return out
}

func (t *Tokenizer) encodeText(text string, out []int32) []int32 {
	if text == "" {
		return out
	}
	for _, w := range t.pre(text, nil) {
		out = append(out, t.word(w)...)
	}
	return out
}

// word is one pre-tokenized word's ids, cached.
func (t *Tokenizer) word(w string) []int32 {
	t.mu.Lock()
	ids, ok := t.cache[w]
	t.mu.Unlock()
	if ok {
		return ids
	}
	syms := make([]string, 0, len(w))
	for i := 0; i < len(w); i++ {
		syms = append(syms, string(byteRune[w[i]]))
	}
	for len(syms) > 1 {
		best, at := -1, -1
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := t.ranks[syms[i]+" "+syms[i+1]]; ok && (best < 0 || r < best) {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		// Merge every occurrence of the pair, left to right, as the
		// reference does in one round.
		l, r := syms[at], syms[at+1]
		merged := syms[:0:0]
		for i := 0; i < len(syms); i++ {
			if i+1 < len(syms) && syms[i] == l && syms[i+1] == r {
				merged = append(merged, l+r)
				i++
				continue
			}
			merged = append(merged, syms[i])
		}
		syms = merged
	}
	ids = make([]int32, 0, len(syms))
	for _, s := range syms {
		if id, ok := t.ids[s]; ok {
			ids = append(ids, id)
			continue
		}
		// A merged symbol without a token (a vocabulary that lost one):
		// its bytes that have one.
		for _, r := range s {
			if id, ok := t.ids[string(r)]; ok {
				ids = append(ids, id)
			}
		}
	}
	t.mu.Lock()
	if len(t.cache) >= maxCache {
		clear(t.cache)
	}
	t.cache[w] = ids
	t.mu.Unlock()
	return ids
}

// Decode is ids' text: each token's symbols mapped back to bytes (special
// tokens as their text). Bytes that are not UTF-8 on their own (a token
// cut inside a character) stay as they are, for the caller to join.
func (t *Tokenizer) Decode(ids []int32) string {
	var b []byte
	for _, id := range ids {
		if id < 0 || int(id) >= len(t.tokens) {
			continue
		}
		s := t.tokens[id]
		for _, r := range s {
			if v, ok := runeByte[r]; ok {
				b = append(b, v)
			} else {
				b = append(b, string(r)...)
			}
		}
	}
	return string(b)
}

// IsSpecial reports whether id is a control or user-defined token
// (<|im_start|>, <|im_end|>, ...).
func (t *Tokenizer) IsSpecial(id int32) bool { return t.isSpec[id] }

// Token is the text of id as the vocabulary writes it (in the byte
// alphabet: "Ġthe"), or "" when id is out of range.
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// ByteVocab is a vocabulary of the 256 byte symbols and the special
// tokens special, with no merges: every text is its bytes. A tokenizer for
// tests of what runs a model, whatever its size (the model's vocabulary
// must be 256 + len(special)).
func ByteVocab(special ...string) Vocab {
	v := Vocab{Model: "gpt2", Pre: "gpt2"}
	for b := range 256 {
		v.Tokens = append(v.Tokens, string(byteRune[b]))
		v.Types = append(v.Types, typeNormal)
	}
	for _, s := range special {
		v.Tokens = append(v.Tokens, s)
		v.Types = append(v.Types, typeControl)
	}
	return v
}
