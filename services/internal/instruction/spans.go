package instruction

import "strings"

// Spans returns the instruction's unquoted values as they are written: every
// run of at most maxWords consecutive whitespace tokens that holds no
// stopword and crosses no clause mark (, ; : ( ) and a sentence's end), each
// token kept whole with its inner punctuation. `ship it to Ada Lee, 12 Oak
// Road, Porto 40213.` gives "ship", "Ada", "Ada Lee", "Lee", "12", "12 Oak",
// "12 Oak Road", ... "Porto 40213", "40213"; `Sign in as ada_x (password
// pw12)` gives "Sign", "ada_x", "password", "password pw12", "pw12".
//
// A name, a street or an email is typed whole into one field, and Words
// splits it where a field wants it kept: at the space of a name, the "_" of
// a username, the "@" and "." of an email. Quoted phrases are left out
// (QuotedPhrases has them), and so is a token without a letter or digit.
// Order: by the run's first token, shorter first.
func Spans(s string, maxWords int) []string {
	if maxWords < 1 {
		return nil
	}
	var out []string
	var run []string
	flush := func() {
		for i := range run {
			for n := 1; n <= maxWords && i+n <= len(run); n++ {
				out = append(out, strings.Join(run[i:i+n], " "))
			}
		}
		run = run[:0]
	}
	for _, tok := range strings.Fields(unquoted(s)) {
		core := strings.TrimLeftFunc(tok, leadMark)
		if len(core) < len(tok) {
			flush() // "(password": a clause opens
		}
		trimmed := strings.TrimRightFunc(core, trailMark)
		switch {
		case trimmed == "" || len(Words(trimmed)) == 0 || IsStopword(strings.ToLower(trimmed)):
			flush()
		default:
			run = append(run, trimmed)
		}
		if len(trimmed) < len(core) {
			flush() // "Lee," "pw12)" "40213.": the clause ends
		}
	}
	flush()
	return out
}

// unquoted replaces each closed quoted phrase of s with a clause mark.
func unquoted(s string) string {
	var b strings.Builder
	in := false
	var quoted strings.Builder
	for _, r := range s {
		switch {
		case !in && (r == '"' || r == '“'):
			in = true
			quoted.Reset()
			quoted.WriteRune(r)
		case in && (r == '"' || r == '”'):
			in = false
			b.WriteString(" ; ")
		case in:
			quoted.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	if in {
		// An unclosed quote quotes nothing (as QuotedPhrases): keep its text.
		b.WriteString(quoted.String())
	}
	return b.String()
}

// leadMark is punctuation that opens a clause or a quotation before a
// token.
func leadMark(r rune) bool { return strings.ContainsRune("([\"'‘“", r) }

// trailMark is punctuation that ends a clause after a token.
func trailMark(r rune) bool { return strings.ContainsRune(".,;:!?)]\"'’”", r) }

// ValueIntroducer returns the word that says which field an unquoted value
// is for: the word of s just before phrase, or the one before that when it
// is a stopword (`change your email to ada@x.test` → "email"; `phone to
// 555-0142` → "phone"), lowercased, or "" when neither is a word of
// substance or phrase is not in s.
func ValueIntroducer(s, phrase string) string {
	i := strings.Index(s, phrase)
	if i < 0 || phrase == "" {
		return ""
	}
	before := Words(s[:i])
	for j := len(before) - 1; j >= 0 && j >= len(before)-2; j-- {
		if w := strings.ToLower(before[j]); !IsStopword(w) {
			return w
		}
	}
	return ""
}
