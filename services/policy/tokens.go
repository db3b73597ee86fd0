package policy

import (
	"hash/fnv"
)

// hashWord maps a lowercased word to its vocabulary bucket: 1 + FNV-1a-32
// mod (vocab-1). Bucket 0 is padding.
func hashWord(w string, vocab int) int64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(w)) // hash.Hash.Write never fails
	return 1 + int64(h.Sum32()%uint32(vocab-1))
}

// fillTokens writes the hashed buckets of the first len(ids) words into ids
// and their mean-pooling weights (1/n on the n used slots, 0 elsewhere) into
// weights, so a weighted sum of embeddings is their mean.
func fillTokens(ws []string, vocab int, ids []int64, weights []float32) {
	n := min(len(ws), len(ids))
	for i := range n {
		ids[i] = hashWord(ws[i], vocab)
		weights[i] = 1 / float32(n)
	}
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) || len(a) == 0 {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// typeVerbs precede the text to type ("type X", "enter X").
var typeVerbs = map[string]bool{"type": true, "enter": true, "write": true, "fill": true, "input": true, "search": true, "answer": true}
