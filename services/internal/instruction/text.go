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

// Literals returns the instruction's unquoted values written with digits
// and punctuation, whole: a date (05/17/2016), a time (5:38 PM, with its
// AM/PM), an amount ($12.50). Words splits them at the punctuation, and a
// field wants them whole; MiniWoB++'s enter-date and enter-time name their
// values this way, without quotes. Sentence punctuation around a token is
// not part of it, and a token without inner punctuation is an ordinary
// word, not a literal, except a negative number (MiniWoB++'s use-spinner:
// `Select -3 with the spinner`), which Words would make 3, and a number a
// value verb takes (`Select 7 with the spinner`, `Enter 12`): the same
// task asks for -10 to 9, and its positive half had no value to type. A
// number elsewhere (`Click button 2`) names something and stays a word.
func Literals(s string) []string {
	var out []string
	toks := strings.Fields(s)
	for i := 0; i < len(toks); i++ {
		t := strings.TrimRight(strings.TrimLeft(toks[i], "(\"'“"), ".,;!?)\"'”")
		taken := i > 0 && valueVerbs[strings.ToLower(toks[i-1])] && number(t)
		if !strings.ContainsAny(t, "0123456789") || len(Words(t)) < 2 && !negative(t) && !taken {
			continue
		}
		if i+1 < len(toks) && strings.Contains(t, ":") {
			if ap := strings.TrimRight(toks[i+1], ".,;!?)"); strings.EqualFold(ap, "AM") || strings.EqualFold(ap, "PM") {
				t += " " + ap
				i++
			}
		}
		out = append(out, t)
	}
	return out
}

// negative reports whether t is a minus sign and digits.
func negative(t string) bool {
	return strings.HasPrefix(t, "-") && number(t)
}

// number reports whether t is digits, after an optional minus sign.
func number(t string) bool {
	digits := strings.TrimPrefix(t, "-")
	return digits != "" && strings.Trim(digits, "0123456789") == ""
}

// valueVerbs take the value that follows them: a number after one is a
// literal.
var valueVerbs = map[string]bool{"select": true, "enter": true, "type": true, "input": true, "set": true}

// Introducer returns the word of s just before the first occurrence of
// phrase (quoted or not), lowercased, or "" when phrase is not in s or
// starts it. In `the username "kanesha" and the password "UWH"` the
// password's introducer is "password": the word that says which field a
// value is for.
func Introducer(s, phrase string) string {
	i := strings.Index(s, phrase)
	if i < 0 || phrase == "" {
		return ""
	}
	before := Words(s[:i])
	if len(before) == 0 {
		return ""
	}
	return strings.ToLower(before[len(before)-1])
}

// ordinals are the ordinal words an instruction uses to pick the n-th of a
// kind ("the 2nd textbox", "the third link").
var ordinals = map[string]int{
	"1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5, "6th": 6, "7th": 7, "8th": 8, "9th": 9, "10th": 10,
	"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
	"ninth": 9, "tenth": 10,
}

// Ordinal returns n for the first ordinal word among lower-case words ws
// ("1st", "second", ...), or 0 when there is none.
func Ordinal(ws []string) int {
	for _, w := range ws {
		if n, ok := ordinals[w]; ok {
			return n
		}
	}
	return 0
}

// stopwords are frequent instruction words that are never the text to type
// and name nothing on the page by themselves.
var stopwords = map[string]bool{
	"a": true, "an": true, "the": true, "and": true, "or": true, "to": true, "on": true, "in": true,
	"into": true, "of": true, "for": true, "with": true, "then": true, "click": true, "select": true,
	"type": true, "enter": true, "press": true, "button": true, "link": true, "field": true, "box": true,
	"text": true, "submit": true, "is": true, "it": true, "from": true, "as": true, "that": true,
}

// IsStopword reports whether the lowercased word w is a stopword: the
// policy's features and the shaping potential skip the same words.
func IsStopword(w string) bool { return stopwords[w] }
