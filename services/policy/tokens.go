package policy

import (
	"hash/fnv"
	"strings"
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

// valueWord stands for a value in the instruction's word bag: no word
// Words returns holds a NUL.
const valueWord = "\x00value"

// template is the instruction's words with each run of a value (a quoted
// phrase or a literal) replaced by one valueWord: what kind of task it is,
// not which seed. Why: the value is a random string (a password, a time, a
// name) whose hashed buckets moved the type head, and on held-out seeds
// greedy enter-time clicked the time field instead of filling it in 8 of 20
// episodes (v537 at 4f0e4a0), and greedy enter-password filled one field
// and clicked the other in 6 of 20. Which element or candidate a value
// belongs to is read from the matching features, never from the bag.
func template(iw []string, values [][]string) []string {
	out := make([]string, 0, len(iw))
	for i := 0; i < len(iw); {
		n := 0
		for _, v := range values {
			if len(v) > n && i+len(v) <= len(iw) && equalWords(iw[i:i+len(v)], v) {
				n = len(v)
			}
		}
		if n == 0 {
			out = append(out, iw[i])
			i++
			continue
		}
		out = append(out, valueWord)
		i += n
	}
	return out
}

// bareValue is s lowercased without spaces and without the brackets and
// quotes around it: "(2,-1)" and "2, -1" are the same value.
func bareValue(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), ""))
	return strings.Trim(s, "()[]{}\"'“”")
}
