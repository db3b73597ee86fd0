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
const Usage = `Usage: asyncwebrl policy audit [--suite builtin|miniwob|all] [--seeds N] [--families a,b] [--strict]
  Replays every task's scripted solution in real Chromium as a demonstration
  takes it, shows each page to the policy as an actor does, and asks the
  policy's heads (the default architecture) for each step. Prints, per task,
  the steps taken and those the heads cannot express, with the reasons.
  MiniWoB++ tasks have no scripted solution outside the tests yet: they are
  listed as "no solution".
  --suite S      tasks of suite S (default builtin)
  --seeds N      episodes per family, seeds 1..N on its test site (default 2)
  --families L   only these families (comma list)
  --strict       exit 1 when a step cannot be expressed
`

// Finding is one task's result.
type Finding struct {
	Family string
	Tier   catalog.Tier
	Steps  int
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
	vals, rest, err := cmdkit.SubFlags(args, []string{"suite", "seeds", "families"}, []string{"strict"})
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
	fams := catalog.SuiteFamilies(suite)
	if v := vals["families"]; v != "" {
		if fams, err = catalog.SelectFamilies(suite, strings.Split(v, ",")); err != nil {
			return cmdkit.Usage(err)
		}
	}
	findings, err := Audit(ctx, fams, seeds, func(s string) { fmt.Fprintln(stdout, s) })
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
// family's test site) through one browser.
func Audit(ctx context.Context, fams []catalog.FamilyInfo, seeds int, progress func(string)) ([]Finding, error) {
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
			if err := replay(ctx, e, &arch, task, &fd); err != nil {
				fd.Problem = err.Error()
				break
			}
		}
		if progress != nil {
			progress(fmt.Sprintf("%s: %d steps, %d inexpressible (%s)", f.Name, fd.Steps, fd.Missed(), time.Since(t0).Round(time.Millisecond)))
		}
		out = append(out, fd)
	}
	return out, nil
}

// replay plays one episode of the scripted solution, asking the heads for
// every step.
func replay(ctx context.Context, e *env.Env, arch *policy.Architecture, task env.TaskRef, fd *Finding) error {
	p, err := webenv.Generate(task.Family, task.Site, task.Seed)
	if err != nil {
		return err
	}
	obs, err := e.Reset(ctx, task)
	if err != nil {
		return err
	}
	for i, st := range p.Plan {
		qctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		acts, err := actor.DemoActions(qctx, e, st)
		cancel()
		if err != nil {
			return fmt.Errorf("seed %d plan step %d (%s %s): %w", task.Seed, i, st.Op, st.Sel, err)
		}
		for _, a := range acts {
			fd.Steps++
			if reason := inexpressible(arch, obs, a); reason != "" {
				fd.Inexpressible[reason]++
			}
			r, err := e.Step(ctx, a)
			if err != nil {
				return fmt.Errorf("seed %d step %s: %w", task.Seed, a, err)
			}
			if r.Info.Error != "" {
				return fmt.Errorf("seed %d step %s: %s", task.Seed, a, r.Info.Error)
			}
			obs = r.Obs
			if r.Done {
				return nil
			}
		}
	}
	return nil
}

// inexpressible is why the policy's heads cannot take a on obs, or "".
// Reasons are generalised (no bids, texts or values) so that a task's
// steps group under a few.
func inexpressible(arch *policy.Architecture, obs *env.Observation, a env.Action) string {
	ev, err := actor.ObservationEvent(obs)
	if err != nil {
		return "the page cannot be encoded: " + err.Error()
	}
	f, err := arch.Featurize(ev)
	if err != nil {
		return "the page cannot be featurized: " + err.Error()
	}
	act, err := action.ToProto(a)
	if err != nil {
		return "the events cannot carry " + string(a.Type)
	}
	if _, err := arch.ChoiceOf(f, act); err != nil {
		r := general(a, err)
		if ne, ok := errors.AsType[*policy.NotRepresentableError](err); ok && ne.Kind == policy.TextNotCandidate {
			// Where a copy mechanism would have to find the value.
			r += " (" + whereIs(ev, act.GetText()) + ")"
		}
		return r
	}
	return ""
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
	if len(where) == 0 {
		return "nowhere on this page: an earlier page, or text outside the elements"
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
	fmt.Fprintln(tw, "TASK\tTIER\tSTEPS\tINEXPRESSIBLE\tWHY")
	steps, missed, tasks := 0, 0, 0
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
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", f.Family, f.Tier, f.Steps, f.Missed(), why)
		steps += f.Steps
		missed += f.Missed()
		if f.Missed() > 0 {
			tasks++
		}
	}
	fmt.Fprintf(tw, "all\t\t%d\t%d\t%d of %d tasks have inexpressible steps\n", steps, missed, tasks, len(findings))
	return tw.Flush()
}
