package instruction

import (
	"strings"
	"unicode"
)

// QuotedPhrases returns the texts between double quotes (ASCII or curly) in
// order, as written; empty phrases are skipped, and an unclosed quote
// quotes nothing.
func QuotedPhrases(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	for _, r := range s {
		switch {
		case !in && (r == '"' || r == '“'):
			in = true
			cur.Reset()
		case in && (r == '"' || r == '”'):
			in = false
			if p := strings.TrimSpace(cur.String()); p != "" {
				out = append(out, p)
			}
		case in:
			cur.WriteRune(r)
		}
	}
	return out
}

// Words splits s into runs of letters and digits, keeping their case.
func Words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// LowerWords is Words(s) lowercased: the form every lexical comparison
// uses.
func LowerWords(s string) []string {
	ws := Words(s)
	for i, w := range ws {
		ws[i] = strings.ToLower(w)
	}
	return ws
}

// ContainsRun reports whether needle occurs as a contiguous run of hay.
func ContainsRun(hay, needle []string) bool { return IndexRun(hay, needle) >= 0 }

// IndexRun returns the first index of needle as a run of hay, or -1 (also
// for an empty needle).
func IndexRun(hay, needle []string) int {
	if len(needle) == 0 {
		return -1
	}
	for i := 0; i+len(needle) <= len(hay); i++ {
		ok := true
		for j, w := range needle {
			if hay[i+j] != w {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}
