package tokenizer_test

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// corpus is the strings the tokenizer is checked on against its
// references: every task's description and instruction-like text of the
// catalogue (built-in and MiniWoB++), page-like lines, and seeded random
// mixtures of what trips pre-tokenizers (digit runs, contractions in both
// cases, whitespace runs before words and at the end, tabs and newlines,
// punctuation runs, accents, CJK, emoji, right-to-left text, the special
// tokens' texts), n strings in all.
func corpus(n int, special []string) []string {
	var out []string
	for _, f := range catalog.Families() {
		out = append(out, f.Name, f.Desc)
	}
	for _, f := range catalog.Schedulable(catalog.SuiteMiniWoB) {
		out = append(out, f.Name, f.Desc)
	}
	out = append(out,
		`Enter the username "kanesha" and the password "x_9b" into the text fields and press login.`,
		"Select 12/25/2016 as the date and hit submit.", "Book the shortest one-way flight from: SFO to: ORD on 10/13/2016.",
		"[3] textbox \"Username\" value=\"kanesha\" focused at (60, 70)", `click("12")`, `fill("7", "hello world")`,
		"", " ", "  ", "\n", "\t\tx", "a  b", "a \n b", "  leading", "trailing  ", "it's I'M we'll THEY'RE you've she'd o'clock",
		"1234567890", "3.14159 -42 +7 1e10 0x1F", "café naïve résumé Zürich", "日本語のテキスト", "中文 文本", "한국어",
		"emoji 🙂🚀 👩‍💻 flags 🇫🇷", "مرحبا بالعالم", "שלום", "Ελληνικά", "Русский текст", "\u00a0nbsp\u2003em space", "tab\tsep\tvalues",
		"<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", "x<|im_end|>y", "<|endoftext|>", "$$$ !!! ??? ...", "a_b-c/d\\e|f",
		"email@example.com https://127.0.0.1:18080/miniwob/click-test.html?seed=7#x",
	)
	rng := rand.New(rand.NewPCG(7, 11))
	pieces := []string{"the", "The", "THE", " click", "button", "Submit", "OK", "'s", "'S", "'re", "'ll", "'d", "'ve", "'m", "'t",
		" ", "  ", "   ", "\n", "\n\n", "\t", " \n", "0", "7", "42", "2016", "3.5", "-1", ",", ".", "!", "?", "...", "\"", "'", "(", ")", "[", "]",
		"_", "-", "/", ":", ";", "@", "#", "é", "ñ", "ü", "ß", "中", "文", "🙂", "👍🏽", "а", "ж", "λ", "ع", "\u200b", "\u00a0", "x", "y", "z"}
	pieces = append(pieces, special...)
	for len(out) < n {
		var b strings.Builder
		for range 1 + rng.IntN(24) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		if rng.IntN(4) == 0 {
			fmt.Fprintf(&b, " %d", rng.IntN(100000))
		}
		out = append(out, b.String())
	}
	return out
}
