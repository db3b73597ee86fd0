package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// preSmolLM splits text as pre-tokenizer "smollm": each digit a word of its
// own (\p{N}), then GPT-2's pattern within the rest.
func preSmolLM(text string, out []string) []string {
	start := 0
	for i, r := range text {
		if unicode.IsNumber(r) {
			out = preGPT2(text[start:i], out)
			n := utf8.RuneLen(r)
			out = append(out, text[i:i+n])
			start = i + n
		}
	}
	return preGPT2(text[start:], out)
}

// preGPT2 splits text by GPT-2's pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// trying the alternatives in order at each position, as the regex engine
// does.
func preGPT2(text string, out []string) []string {
	rs := []rune(text)
	i := 0
	// offs[i] is the byte offset of rune i, so that words are slices of
	// text (no copies).
	offs := make([]int, len(rs)+1)
	b := 0
	for k, r := range rs {
		offs[k] = b
		b += utf8.RuneLen(r)
	}
	offs[len(rs)] = b
	for i < len(rs) {
		j := gpt2Match(rs, i)
		out = append(out, text[offs[i]:offs[j]])
		i = j
	}
	return out
}

func isOther(r rune) bool { return !unicode.IsSpace(r) && !unicode.IsLetter(r) && !unicode.IsNumber(r) }

// gpt2Match is the end of the pattern's match at i (always > i).
func gpt2Match(rs []rune, i int) int {
	n := len(rs)
	// Contractions.
	if rs[i] == '\'' && i+1 < n {
		switch rs[i+1] {
		case 's', 't', 'm', 'd':
			return i + 2
		}
		if i+2 < n {
			switch string(rs[i+1 : i+3]) {
			case "re", "ve", "ll":
				return i + 3
			}
		}
	}
	// ` ?X+` for the letter, number and other classes, in that order.
	for _, class := range []func(rune) bool{unicode.IsLetter, unicode.IsNumber, isOther} {
		j := i
		if rs[j] == ' ' && j+1 < n && class(rs[j+1]) {
			j++
		}
		if class(rs[j]) {
			for j < n && class(rs[j]) {
				j++
			}
			return j
		}
	}
	// Whitespace: \s+(?!\S), else \s+.
	if unicode.IsSpace(rs[i]) {
		j := i
		for j < n && unicode.IsSpace(rs[j]) {
			j++
		}
		if j == n {
			return j
		}
		if j-i > 1 {
			return j - 1 // leave the last one to lead the next word
		}
		return j
	}
	return i + 1 // unreachable: every rune is a space, a letter, a number or other
}
