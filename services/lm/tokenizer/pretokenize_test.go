package tokenizer

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestPreTokenize: the words each pre-tokenizer cuts (golden; one input
// per line, Go-quoted).
func TestPreTokenize(t *testing.T) {
	datadriven.RunTest(t, "testdata/pretokenize.txt", func(t *testing.T, d *datadriven.TestData) string {
		pre := map[string]func(string, []string) []string{"smollm": preSmolLM, "gpt2": preGPT2}[d.Cmd]
		if pre == nil {
			d.Fatalf(t, "unknown pre-tokenizer %s", d.Cmd)
		}
		var b strings.Builder
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			s, err := strconv.Unquote(line)
			if err != nil {
				d.Fatalf(t, "%s: %v", line, err)
			}
			words := pre(s, nil)
			if strings.Join(words, "") != s {
				t.Errorf("%q: words %q do not join back", s, words)
			}
			q := make([]string, len(words))
			for i, w := range words {
				q[i] = strconv.Quote(w)
			}
			fmt.Fprintf(&b, "%s → %s\n", line, strings.Join(q, " "))
		}
		return b.String()
	})
}

// TestBPE: merges by rank, every occurrence of the best pair in a round,
// special tokens cut out only when asked, and the bytes back.
func TestBPE(t *testing.T) {
	sym := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			b.WriteRune(byteRune[s[i]])
		}
		return b.String()
	}
	var tokens []string
	for b := range 256 {
		tokens = append(tokens, string(byteRune[b]))
	}
	tokens = append(tokens, sym("aa"), sym("aaa"), sym(" a"), "<|x|>")
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = typeNormal
	}
	types[len(types)-1] = typeControl
	tok, err := New(Vocab{Model: "gpt2", Pre: "smollm", Tokens: tokens, Types: types,
		Merges: []string{sym("a") + " " + sym("a"), sym("aa") + " " + sym("a"), sym(" ") + " " + sym("a")}})
	if err != nil {
		t.Fatal(err)
	}
	id := func(s string) int32 { i, _ := tok.ID(sym(s)); return i }
	for _, tc := range []struct {
		text    string
		special bool
		want    []int32
	}{
		{"aaaa", false, []int32{id("aa"), id("aa")}}, // both pairs merge in one round; "aa aa" has no merge
		{"aaa", false, []int32{id("aaa")}},
		{" a", false, []int32{id(" a")}},
		{"<|x|>a", true, []int32{int32(len(tokens) - 1), id("a")}},
		{"<|x|>", false, []int32{id("<"), id("|"), id("x"), id("|"), id(">")}},
	} {
		got := tok.Encode(tc.text, tc.special)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%q (special %v): %v, want %v", tc.text, tc.special, got, tc.want)
		}
		if back := tok.Decode(got); back != tc.text {
			t.Errorf("%q decodes as %q", tc.text, back)
		}
	}
	if _, err := New(Vocab{Model: "llama", Tokens: tokens}); err == nil {
		t.Error("a sentencepiece vocabulary was taken")
	}
	if _, err := New(Vocab{Model: "gpt2", Pre: "qwen2", Tokens: tokens}); err == nil {
		t.Error("an unknown pre-tokenizer was taken")
	}
}
