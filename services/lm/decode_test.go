package lm

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
)

// TestDecoder: over a byte vocabulary, the allowed next tokens are exactly
// the bytes that keep the answer a prefix; the end token only when it is
// complete; a pick's log-prob is under the softmax of the allowed logits,
// and greedy picks the largest of them.
func TestDecoder(t *testing.T) {
	tok, err := tokenizer.New(tokenizer.ByteVocab("<|im_end|>"))
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := tok.ID("<|im_end|>")
	d := NewDecoder(tok, eos)
	l := NewLanguage(page(), action.SetBid, AnswerAction)
	texts := func(ids []int32) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids {
			m[tok.Decode([]int32{id})] = true
		}
		return m
	}
	ids, end := d.Allowed(l, `click("`)
	if got := texts(ids); end || len(got) != 5 || !got["3"] || !got["7"] || got["9"] {
		t.Errorf(`after click(": %v, end %v`, got, end)
	}
	if ids, end = d.Allowed(l, `click("5")`); !end || len(ids) != 0 {
		t.Errorf(`after click("5"): %d tokens, end %v`, len(ids), end)
	}
	logits := make([]float32, tok.Len())
	for i := range logits {
		logits[i] = float32(i%7) - 3
	}
	c, err := d.Pick(l, `click("`, logits, Sampling{Greedy: true, Temperature: 3})
	if err != nil {
		t.Fatal(err)
	}
	allowed, _ := d.Allowed(l, `click("`)
	var sum float64
	for _, id := range allowed {
		sum += math.Exp(float64(logits[id]))
		if logits[id] > logits[c.ID] {
			t.Errorf("greedy picked %q below %q", c.Text, tok.Decode([]int32{id}))
		}
	}
	if want := float64(logits[c.ID]) - math.Log(sum); math.Abs(c.Logprob-want) > 1e-9 {
		t.Errorf("log-prob %v, want %v", c.Logprob, want)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	// Drawn at temperature T (0 is 1), each token comes as often as its
	// probability under the softmax of logits/T, and its recorded
	// log-prob is that probability's: the behaviour policy the learner
	// scores.
	for _, temp := range []float64{0, 1, 2.5} {
		T := cmp.Or(temp, 1)
		var sumT float64
		for _, id := range allowed {
			sumT += math.Exp(float64(logits[id]) / T)
		}
		seen := map[int32]int{}
		for range 4000 {
			c, err := d.Pick(l, `click("`, logits, Sampling{Temperature: temp, RNG: rng})
			if err != nil {
				t.Fatal(err)
			}
			seen[c.ID]++
			if want := float64(logits[c.ID])/T - math.Log(sumT); math.Abs(c.Logprob-want) > 1e-9 {
				t.Errorf("temperature %v: log-prob %v, want %v", temp, c.Logprob, want)
			}
		}
		for _, id := range allowed {
			p := math.Exp(float64(logits[id])/T) / sumT
			if got := float64(seen[id]) / 4000; math.Abs(got-p) > 0.04 {
				t.Errorf("temperature %v: token %q drawn %.3f of the time, its probability %.3f", temp, tok.Decode([]int32{id}), got, p)
			}
		}
	}
	if c, err := d.Pick(l, `click("5")`, logits, Sampling{RNG: rng}); err != nil || !c.End || c.ID != eos {
		t.Errorf("complete answer: %+v %v", c, err)
	}
	if _, err := d.Pick(&Language{}, "", logits, Sampling{Greedy: true}); err != ErrNoToken {
		t.Errorf("empty language: %v", err)
	}
}

// TestDecoderAllowedByFirstByte: the tokens Allowed admits, found through
// their first bytes, are exactly those a check of every token admits, in
// id order, over a vocabulary with multi-byte tokens (the answers' words,
// spaces and a newline inside tokens), at every prefix of sampled answers
// in both forms.
func TestDecoderAllowedByFirstByte(t *testing.T) {
	v := tokenizer.ByteVocab("<|im_end|>")
	for _, s := range []string{"click", `("`, `")`, "#Ġbutton", "ĠĠ", `]Ċclick`, `Ġ"`, "Login", `"5`, "fill", `ĠtextboxĠ"`, `Ġ[`, "Ċ", `",Ġ"`, "noop()", "é"} {
		v.Tokens, v.Types = append(v.Tokens, s), append(v.Types, 1)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		t.Fatal(err)
	}
	eos, _ := tok.ID("<|im_end|>")
	d := NewDecoder(tok, eos)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, a := range Answers {
		l := NewLanguage(page(), action.SetBidCoord, a)
		for range 40 {
			s := sample(l, rng)
			for i := range len(s) + 1 {
				out := s[:i]
				got, _ := d.Allowed(l, out)
				var want []int32
				for id := range tok.Len() {
					if x := d.Text(int32(id)); x != "" && l.Prefix(out+x) {
						want = append(want, int32(id))
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: after %q: allowed %v, every token's check %v", a, out, got, want)
				}
			}
		}
	}
}
