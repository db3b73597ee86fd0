package oracle

import (
	"context"
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// StepCap is the random policy's step budget for a tier: a little above the
// longest scripted solution of the tier.
func StepCap(t catalog.Tier) int {
	switch t {
	case catalog.Easy:
		return 5
	case catalog.Medium:
		return 10
	default:
		return 15
	}
}

// Random is the random policy: uniform over the actions on the visible
// elements (click any; fill a text field with tokens of the instruction;
// pick an option of a select), plus scrolling down and up.
type Random struct{ r *rand.Rand }

// NewRandom returns a random policy with its own seeded generator.
func NewRandom(seed uint64) *Random {
	return &Random{r: rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))}
}

// Act picks an action for obs.
func (p *Random) Act(obs *env.Observation) env.Action {
	tokens := instructionTokens(obs.Instruction)
	var cands []env.Action
	for _, el := range obs.Elements {
		if !el.InViewport || el.Disabled {
			continue
		}
		switch el.Role {
		case "textbox":
			cands = append(cands, env.Action{Type: env.Click, BID: el.BID}, env.Action{Type: env.Fill, BID: el.BID, Text: p.text(tokens)})
		case "combobox", "listbox":
			if len(el.Options) > 0 {
				cands = append(cands, env.Action{Type: env.SelectOption, BID: el.BID, Options: []string{el.Options[p.r.IntN(len(el.Options))]}})
			}
		default:
			cands = append(cands, env.Action{Type: env.Click, BID: el.BID})
		}
	}
	cands = append(cands, env.Action{Type: env.Scroll, DY: 100}, env.Action{Type: env.Scroll, DY: -100})
	return cands[p.r.IntN(len(cands))]
}

func (p *Random) text(tokens []string) string {
	if len(tokens) == 0 {
		return "a"
	}
	n := 1 + p.r.IntN(2)
	out := make([]string, n)
	for i := range out {
		out[i] = tokens[p.r.IntN(len(tokens))]
	}
	return strings.Join(out, " ")
}

// instructionTokens splits an instruction into words, dropping quotes and
// punctuation.
func instructionTokens(s string) []string {
	var out []string
	for _, t := range strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '@' || r == '.' || r == '/')
	}) {
		if t = strings.Trim(t, ".-/"); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// RunRandom plays one episode of the random policy for at most maxSteps.
func RunRandom(ctx context.Context, e *env.Env, task env.TaskRef, maxSteps int, p *Random) (*Demo, error) {
	obs, err := e.Reset(ctx, task)
	if err != nil {
		return nil, err
	}
	d := &Demo{Task: task}
	for range maxSteps {
		a := p.Act(obs)
		d.Steps = append(d.Steps, DemoStep{Obs: obs, Action: a})
		r, err := e.Step(ctx, a)
		if err != nil {
			return d, err
		}
		d.Return += r.Reward
		d.Success, d.Partial, d.Reason, d.Facts = r.Info.Success, r.Info.Partial, r.Info.Reason, r.Info.Facts
		obs = r.Obs
		if r.Done {
			break
		}
	}
	return d, nil
}
