package policyaudit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// Usage is the command's help.
const Usage = `Usage: asyncwebrl policy audit [--suite builtin|miniwob|all] [--seeds N] [--families a,b] [--memory-steps K] [--strict]
  Replays every task's scripted solution in real Chromium as a demonstration
  takes it, shows each page to the policy as an actor does, and asks the
  policy's heads (the default architecture) for each step. Prints, per task,
  the steps taken and those the heads cannot express, with the reasons.
  MiniWoB++ tasks have no scripted solution outside the tests yet: they are
  listed as "no solution".
  --suite S      tasks of suite S (default builtin)
  --seeds N      episodes per family, seeds 1..N on its test site (default 2)
  --families L   only these families (comma list)
  --memory-steps K  past steps each page remembers, as an actor's
                 (default 4; 0: no memory, so text read on an earlier
                 page cannot be copied)
  --strict       exit 1 when a step cannot be expressed
`

// Finding is one task's result.
type Finding struct {
	Family string
	Tier   catalog.Tier
	Steps  int
	// Episodes replayed, and Won: those that ended in success with every
	// expressible step taken as the policy's heads express it (the
	// action ActionOf builds from the step's Choice), not as scripted.
	Episodes, Won int
	// Inexpressible counts the steps the heads cannot express, by reason.
	Inexpressible map[string]int
	// Problem is why the task could not be replayed ("no solution", an
	// oracle error).
	Problem string
}

// Missed is the number of inexpressible steps.
func (f Finding) Missed() int {
	n := 0
	for _, c := range f.Inexpressible {
		n += c
	}
	return n
}

// Run is the command.
func Run(ctx context.Context, args []string, stdout io.Writer) error {
	if cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, Usage)
		return nil
	}
	vals, rest, err := cmdkit.SubFlags(args, []string{"suite", "seeds", "families", "memory-steps"}, []string{"strict"})
	if err != nil {
		return cmdkit.Usage(err)
	}
	if len(rest) > 0 {
		return cmdkit.Usage(fmt.Errorf("policy audit takes no arguments, got %q", rest))
	}
	suite, err := catalog.ParseSuite(vals["suite"])
	if err != nil {
		return cmdkit.Usage(err)
	}
	seeds := 2
	if v, ok := vals["seeds"]; ok {
		if seeds, err = strconv.Atoi(v); err != nil || seeds < 1 {
			return cmdkit.Usage(fmt.Errorf("invalid --seeds %q: want a positive number", v))
		}
	}
	memory := actor.DefaultMemorySteps
	if v, ok := vals["memory-steps"]; ok {
		if memory, err = strconv.Atoi(v); err != nil || memory < 0 {
			return cmdkit.Usage(fmt.Errorf("invalid --memory-steps %q: want 0 or more", v))
		}
	}
	fams := catalog.SuiteFamilies(suite)
	if v := vals["families"]; v != "" {
		if fams, err = catalog.SelectFamilies(suite, strings.Split(v, ",")); err != nil {
			return cmdkit.Usage(err)
		}
	}
	findings, err := Audit(ctx, fams, seeds, memory, func(s string) { fmt.Fprintln(stdout, s) })
	if err != nil {
		return err
	}
	if err := Print(stdout, findings); err != nil {
		return err
	}
	if _, ok := vals["strict"]; ok {
		for _, f := range findings {
			if f.Missed() > 0 {
				return errors.New("some scripted steps cannot be expressed by the policy")
			}
		}
	}
	return nil
}

// Audit replays the families' solutions (seeds 1..seeds on each built-in
// family's test site) through one browser, each page remembering memory
// past steps as an actor's would.
func Audit(ctx context.Context, fams []catalog.FamilyInfo, seeds, memory int, progress func(string)) ([]Finding, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := webenv.New(webenv.WithAddr("127.0.0.1:0"), webenv.WithSplit(catalog.SplitAll), webenv.WithLogger(quiet))
	if err != nil {
		return nil, err
	}
	if err := srv.Start(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = srv.Stop(context.Background()) }()
	b, err := env.LaunchBrowser(ctx)
	if err != nil {
		return nil, fmt.Errorf("unable to start Chromium for the audit: %w", err)
	}
	defer func() { _ = b.Close() }()
	e, err := env.New(ctx, b, srv.URL())
	if err != nil {
		return nil, err
	}
	defer func() { _ = e.Close() }()
	arch := policy.DefaultArchitecture()
	var out []Finding
	for _, f := range fams {
		fd := Finding{Family: f.Name, Tier: f.Tier, Inexpressible: map[string]int{}}
		if catalog.IsMiniWoB(f.Name) {
			fd.Problem = "no solution"
			out = append(out, fd)
			continue
		}
		t0 := time.Now()
		for seed := int64(1); seed <= int64(seeds); seed++ {
			task := env.TaskRef{Family: f.Name, Site: catalog.HeldOutSite(f), Seed: seed}
			fd.Episodes++
			if err := replay(ctx, e, &arch, task, memory, &fd); err != nil {
				fd.Problem = err.Error()
				break
			}
		}
		if progress != nil {
			progress(fmt.Sprintf("%s: %d steps, %d inexpressible, %d of %d episodes won (%s)", f.Name, fd.Steps, fd.Missed(), fd.Won, fd.Episodes, time.Since(t0).Round(time.Millisecond)))
		}
		out = append(out, fd)
	}
	return out, nil
}

// replay plays one episode of the scripted solution, asking the heads for
// every step.
func replay(ctx context.Context, e *env.Env, arch *policy.Architecture, task env.TaskRef, memory int, fd *Finding) error {
	p, err := webenv.Generate(task.Family, task.Site, task.Seed)
	if err != nil {
		return err
	}
	obs, err := e.Reset(ctx, task)
	if err != nil {
		return err
	}
	// The memory an actor's observations carry (Observation.memory): a
	// value read pages ago is copied from there.
	mem := actor.NewMemory(memory)
	var t uint32
	for i, st := range p.Plan {
		qctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		acts, err := actor.DemoActions(qctx, e, st)
		cancel()
		if err != nil {
			return fmt.Errorf("seed %d plan step %d (%s %s): %w", task.Seed, i, st.Op, st.Sel, err)
		}
		for _, a := range acts {
			fd.Steps++
			ev, err := actor.ObservationEvent(obs)
			if err != nil {
				fd.Inexpressible["the page cannot be encoded: "+err.Error()]++
				continue
			}
			mem.Recall(ev)
			act, err := action.ToProto(a)
			if err != nil {
				fd.Inexpressible["the events cannot carry "+string(a.Type)]++
				continue
			}
			own, reason := expressed(arch, ev, a, act)
			if reason != "" {
				fd.Inexpressible[reason]++
			} else {
				a, act = own, nil // the policy's version of the step
			}
			r, err := e.Step(ctx, a)
			if err != nil {
				return fmt.Errorf("seed %d step %s: %w", task.Seed, a, err)
			}
			if r.Info.Error != "" {
				return fmt.Errorf("seed %d step %s: %s", task.Seed, a, r.Info.Error)
			}
			if act == nil {
				if act, err = action.ToProto(a); err != nil {
					return err
				}
			}
			mem.Remember(t, act, ev, r.Reward)
			t++
			obs = r.Obs
			if r.Done {
				if r.Info.Success {
					fd.Won++
				}
				return nil
			}
		}
	}
	return nil
}

// expressed returns step a (act as an event) on the page of ev as the
// policy's heads express it: the action ActionOf builds from its Choice.
// When they cannot, it returns why instead; reasons are generalised (no
// bids, texts or values) so that a task's steps group under a few.
func expressed(arch *policy.Architecture, ev *eventspb.Observation, a env.Action, act *eventspb.Action) (env.Action, string) {
	f, err := arch.Featurize(ev)
	if err != nil {
		return env.Action{}, "the page cannot be featurized: " + err.Error()
	}
	c, err := arch.ChoiceOf(f, act)
	if err == nil {
		own, err := arch.ActionOf(f, c)
		if err != nil {
			return env.Action{}, "the choice cannot be acted: " + err.Error()
		}
		out, err := action.FromProto(own)
		if err != nil {
			return env.Action{}, "the choice cannot be acted: " + err.Error()
		}
		return out, ""
	}
	r := general(a, err)
	if ne, ok := errors.AsType[*policy.NotRepresentableError](err); ok && ne.Kind == policy.TextNotCandidate {
		// Where a copy mechanism would have to find the value.
		r += " (" + whereIs(ev, act.GetText()) + ")"
	}
	return env.Action{}, r
}

// whereIs says where on the page, as the policy sees it, text occurs: in
// the instruction, an element's own text, value or options, the text
// around an element (its context), or nowhere.
func whereIs(ev *eventspb.Observation, text string) string {
	t := strings.ToLower(strings.TrimSpace(text))
	if t == "" {
		return "empty"
	}
	in := func(s string) bool { return strings.Contains(strings.ToLower(s), t) }
	if in(ev.GetInstruction()) {
		return "in the instruction"
	}
	var where []string
	for _, el := range ev.GetElements() {
		switch {
		case in(el.GetText()):
			where = append(where, "an element's text")
		case in(el.GetValue()):
			where = append(where, "an element's value")
		case slices.ContainsFunc(el.GetOptions(), in):
			where = append(where, "an element's options")
		case in(el.GetContext()):
			where = append(where, "an element's context")
		}
	}
	if slices.ContainsFunc(ev.GetPageText(), in) {
		where = append(where, "the page's text")
	}
	if slices.ContainsFunc(ev.GetMemory(), func(st *eventspb.PastStep) bool { return slices.ContainsFunc(st.GetPageText(), in) }) {
		where = append(where, "an earlier page's text")
	}
	if len(where) == 0 {
		return "nowhere the policy sees"
	}
	slices.Sort(where)
	return "in " + slices.Compact(where)[0]
}

// general names a ChoiceOf error by its kind and the action's type.
func general(a env.Action, err error) string {
	if ne, ok := errors.AsType[*policy.NotRepresentableError](err); ok {
		return string(a.Type) + ": " + string(ne.Kind)
	}
	return string(a.Type) + ": " + err.Error()
}

// Print writes the findings: one row per task, then the totals.
func Print(w io.Writer, findings []Finding) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tTIER\tSTEPS\tINEXPRESSIBLE\tWON\tWHY")
	steps, missed, tasks, episodes, won := 0, 0, 0, 0, 0
	for _, f := range findings {
		why := f.Problem
		if why == "" {
			var parts []string
			for _, r := range slices.SortedFunc(maps.Keys(f.Inexpressible), func(a, b string) int {
				return cmp.Or(f.Inexpressible[b]-f.Inexpressible[a], strings.Compare(a, b))
			}) {
				parts = append(parts, fmt.Sprintf("%d× %s", f.Inexpressible[r], r))
			}
			why = strings.Join(parts, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d/%d\t%s\n", f.Family, f.Tier, f.Steps, f.Missed(), f.Won, f.Episodes, why)
		steps += f.Steps
		episodes += f.Episodes
		won += f.Won
		missed += f.Missed()
		if f.Missed() > 0 {
			tasks++
		}
	}
	fmt.Fprintf(tw, "all\t\t%d\t%d\t%d/%d\t%d of %d tasks have inexpressible steps\n", steps, missed, won, episodes, tasks, len(findings))
	return tw.Flush()
}
