package oracle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/instruction"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// Play is a scripted solver's hold on one MiniWoB++ episode: the newest
// observation and the step every action goes through. The step is the
// env's for a test or a demonstration; the expressiveness audit's asks the
// policy's heads for the action first and steps their version of it.
type Play struct {
	Env *env.Env
	// Obs is the newest observation; Last the newest step's result (nil
	// before the first).
	Obs  *env.Observation
	Last *env.StepResult
	step StepFunc
}

// StepFunc takes one action of a solver.
type StepFunc func(ctx context.Context, a env.Action) (*env.StepResult, error)

// MiniWoBSolver plays one episode of a MiniWoB++ task from its first
// observation. It returns an error when it cannot act (an element is not
// there, the instruction has an unexpected form); whether the episode was
// won is p.Last's.
type MiniWoBSolver func(ctx context.Context, p *Play) error

// SolverFor returns the scripted solver of a MiniWoB++ family
// ("miniwob/click-test"), if it has one.
func SolverFor(family string) (MiniWoBSolver, bool) {
	s, ok := miniwobSolvers[strings.TrimPrefix(family, catalog.MiniWoBPrefix)]
	return s, ok
}

// SolvedTasks lists the MiniWoB++ tasks that have a scripted solver, sorted.
func SolvedTasks() []string {
	var out []string
	for name := range miniwobSolvers {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// NewPlay starts a play of the episode whose first observation is obs;
// step nil takes actions through e.Step.
func NewPlay(e *env.Env, obs *env.Observation, step StepFunc) *Play {
	if step == nil {
		step = e.Step
	}
	return &Play{Env: e, Obs: obs, step: step}
}

// SolveMiniWoB resets task and plays it with its scripted solver through
// step (nil: the env's). The play is returned also on an error, with what
// was done.
func SolveMiniWoB(ctx context.Context, e *env.Env, task env.TaskRef, step StepFunc) (*Play, error) {
	obs, err := e.Reset(ctx, task)
	if err != nil {
		return nil, err
	}
	p := NewPlay(e, obs, step)
	return p, p.Solve(ctx, task)
}

// Solve plays task, whose episode p starts, with its scripted solver to the
// episode's end.
func (p *Play) Solve(ctx context.Context, task env.TaskRef) error {
	s, ok := SolverFor(task.Family)
	if !ok {
		return fmt.Errorf("no scripted solver for %s", task.Family)
	}
	instr := p.Obs.Instruction
	if err := s(ctx, p); err != nil {
		return fmt.Errorf("unable to solve %s seed %d (%q): %w", task.Family, task.Seed, instr, err)
	}
	if p.Last == nil || !p.Last.Done {
		return fmt.Errorf("unable to solve %s seed %d (%q): the solver stopped before the episode ended", task.Family, task.Seed, instr)
	}
	return nil
}

// errOver is a step asked for after the episode ended.
var errOver = errors.New("the episode ended before this step")

// Do takes action a. An action the env refuses (its Info.Error) is an error.
func (p *Play) Do(ctx context.Context, a env.Action) error {
	if p.Last != nil && p.Last.Done {
		return fmt.Errorf("%s: %w (%s)", a, errOver, p.Last.Info.Reason)
	}
	r, err := p.step(ctx, a)
	if err != nil {
		return err
	}
	if r.Info.Error != "" {
		return fmt.Errorf("%s: %s", a, r.Info.Error)
	}
	p.Last = r
	if r.Obs != nil {
		p.Obs = r.Obs
	}
	return nil
}

// By takes a on the first visible element a CSS selector finds.
func (p *Play) By(ctx context.Context, css string, a env.Action) error {
	bid, err := p.Env.QueryBID(ctx, css, findWait)
	if err != nil {
		return fmt.Errorf("unable to find %s: %w", css, err)
	}
	a.BID = bid
	return p.Do(ctx, a)
}

// On takes a on the element of the newest observation with a role ("" any)
// and exactly the text.
func (p *Play) On(ctx context.Context, role, text string, a env.Action) error {
	for _, el := range p.Obs.Elements {
		if (role == "" || el.Role == role) && el.Text == text {
			a.BID = el.BID
			return p.Do(ctx, a)
		}
	}
	return fmt.Errorf("no %s element %q on the page", role, text)
}

// ByID returns the element of the newest observation whose DOM id is id,
// or nil.
func (p *Play) ByID(id string) *env.Element {
	for i := range p.Obs.Elements {
		if p.Obs.Elements[i].DOMID == id {
			return &p.Obs.Elements[i]
		}
	}
	return nil
}

// ByJS takes a on the element a JavaScript expression finds (for a solver
// that finds it by the text around it, which CSS cannot). The element must
// be one the observations list (it has a bid).
func (p *Play) ByJS(ctx context.Context, js string, a env.Action) error {
	var bid string
	if err := p.Read(ctx, `(() => { const el = (`+js+`); return el ? el.getAttribute('bid') || '' : ''; })()`, &bid); err != nil {
		return err
	}
	if bid == "" {
		return fmt.Errorf("no listed element is %s", js)
	}
	a.BID = bid
	return p.Do(ctx, a)
}

// Read evaluates js in the page (env.Read).
func (p *Play) Read(ctx context.Context, js string, out any) error {
	return p.Env.Read(ctx, js, out)
}

// Quoted returns the instruction's quoted phrases, in order, as the
// featurizer reads them.
func (p *Play) Quoted() []string { return instruction.QuotedPhrases(p.Obs.Instruction) }

// Quote returns the instruction's i-th quoted phrase.
func (p *Play) Quote(i int) (string, error) {
	q := p.Quoted()
	if i >= len(q) {
		return "", fmt.Errorf("the instruction %q has %d quoted phrases, want %d", p.Obs.Instruction, len(q), i+1)
	}
	return q[i], nil
}

// Between returns the instruction's text between prefix and suffix.
func (p *Play) Between(prefix, suffix string) (string, error) {
	s := p.Obs.Instruction
	i := strings.Index(s, prefix)
	if i < 0 {
		return "", fmt.Errorf("the instruction %q has no %q", s, prefix)
	}
	s = s[i+len(prefix):]
	j := strings.Index(s, suffix)
	if j < 0 {
		return "", fmt.Errorf("the instruction %q has no %q after %q", p.Obs.Instruction, suffix, prefix)
	}
	return s[:j], nil
}
