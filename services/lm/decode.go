package lm

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/asyncwebrl/asyncwebrl/services/lm/tokenizer"
)

// Decoder constrains a model's next token to the page's Language: a token
// is allowed when the answer so far followed by its text is still a
// prefix of an answer; end of text only when the answer is complete.
type Decoder struct {
	tok   *tokenizer.Tokenizer
	texts []string // each token's text (special tokens: "", never allowed)
	eos   int32
	// byFirst groups the tokens by their text's first byte, in id order:
	// a token can follow an answer only if its first byte can, so Allowed
	// asks the language about 256 bytes and then about the few tokens
	// they admit, rather than about all 49,152 (a target answer's
	// language has an alternative per element and action).
	byFirst [256][]int32
}

// NewDecoder is the decoder over tok's vocabulary, ending answers with eos.
func NewDecoder(tok *tokenizer.Tokenizer, eos int32) *Decoder {
	d := &Decoder{tok: tok, eos: eos, texts: make([]string, tok.Len())}
	for id := range tok.Len() {
		if s := tok.Token(int32(id)); s != "" && !tok.IsSpecial(int32(id)) {
			d.texts[id] = tok.Decode([]int32{int32(id)})
			if t := d.texts[id]; t != "" {
				d.byFirst[t[0]] = append(d.byFirst[t[0]], int32(id))
			}
		}
	}
	return d
}

// Text is token id's text as the decoder spells answers ("" for special
// tokens).
func (d *Decoder) Text(id int32) string {
	if id < 0 || int(id) >= len(d.texts) {
		return ""
	}
	return d.texts[id]
}

// EOS is the token that ends an answer.
func (d *Decoder) EOS() int32 { return d.eos }

// Allowed lists the tokens that may follow answer out in l, and whether
// the answer may end here.
func (d *Decoder) Allowed(l *Language, out string) (ids []int32, end bool) {
	end = l.Complete(out)
	// The language's prefixes are closed under taking a prefix: a token
	// whose first byte cannot follow cannot either.
	next := []byte(out + " ")
	for c := range 256 {
		if len(d.byFirst[c]) == 0 {
			continue
		}
		next[len(out)] = byte(c)
		if !l.Prefix(string(next)) {
			continue
		}
		for _, id := range d.byFirst[c] {
			if l.Prefix(out + d.texts[id]) {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids) // in id order, as a sampler's draw depends on it
	return ids, end
}

// Choice is one generated token and its log-prob under the constrained
// distribution (the softmax of the logits over the allowed tokens, at the
// sampling temperature), the behaviour policy's.
type Choice struct {
	ID      int32
	Text    string
	Logprob float64
	End     bool // the end token: the answer is complete
}

// ErrNoToken: nothing may follow the answer and it is not complete (a
// language with no answer: a page with nothing to act on in the set).
var ErrNoToken = errors.New("no token may follow the answer")

// Sampling is how a token is chosen: the most likely allowed one
// (Greedy), or one drawn with RNG from the allowed tokens' softmax at
// Temperature (0: 1). A temperature above 1 flattens the distribution: a
// small model's samples on one page agree (12-07: 71% of SmolLM2's GRPO
// groups of four had equal returns, and such a group teaches nothing), so
// spreading them gives GRPO differences to learn from.
type Sampling struct {
	Greedy      bool
	Temperature float64
	RNG         *rand.Rand
}

// TokenTemperature is the temperature of the token after answer prefix out
// of language l, for an answer sampled at t (0: 1): t in the answer's
// structure, 1 in free text (Language.FreeText), where a flatter
// distribution only garbles the string. The actor draws at it and the
// learner scores at it, each from the page.
func TokenTemperature(l *Language, out string, t float64) float64 {
	// At 1 (the default) every token is at 1: no need to ask the
	// language, which matches the prefix against every alternative.
	if t <= 0 || t == 1 || l.FreeText(out) {
		return 1
	}
	return t
}

// temp is s's temperature, 1 when unset.
func (s Sampling) temp() float64 {
	if s.Temperature > 0 {
		return s.Temperature
	}
	return 1
}

// Pick chooses the next token of answer out from logits as s says.
func (d *Decoder) Pick(l *Language, out string, logits []float32, s Sampling) (Choice, error) {
	ids, end := d.Allowed(l, out)
	return d.PickFrom(ids, end, logits, s)
}

// PickFrom is Pick on the tokens Allowed gave for the answer so far (a
// generation loop that asked already, to stop on an answer nothing can
// follow, passes them on rather than asking twice: each ask checks every
// token of the vocabulary).
func (d *Decoder) PickFrom(ids []int32, end bool, logits []float32, s Sampling) (Choice, error) {
	if end {
		ids = append(ids[:len(ids):len(ids)], d.eos)
	}
	if len(ids) == 0 {
		return Choice{}, ErrNoToken
	}
	// Greedy steps report the log-prob at temperature 1: the model's own.
	t := 1.0
	if !s.Greedy {
		t = s.temp()
	}
	z := func(id int32) float64 { return float64(logits[id]) / t }
	maxL := math.Inf(-1)
	for _, id := range ids {
		maxL = max(maxL, z(id))
	}
	var sum float64
	for _, id := range ids {
		sum += math.Exp(z(id) - maxL)
	}
	lse := maxL + math.Log(sum)
	pick := ids[0]
	if s.Greedy {
		for _, id := range ids {
			if logits[id] > logits[pick] {
				pick = id
			}
		}
	} else {
		u := s.RNG.Float64() * sum
		for _, id := range ids {
			u -= math.Exp(z(id) - maxL)
			pick = id
			if u <= 0 {
				break
			}
		}
	}
	c := Choice{ID: pick, Logprob: z(pick) - lse, End: pick == d.eos && end}
	if !c.End {
		c.Text = d.texts[pick]
	}
	return c, nil
}
