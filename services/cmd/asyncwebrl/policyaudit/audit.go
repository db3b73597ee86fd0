package policyaudit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/oracle"
)

// Usage is the command's help.
const Usage = `Usage: asyncwebrl policy audit [--suite builtin|miniwob|all] [--seeds N] [--families a,b] [--memory-steps K] [--miniwob-dir D] [--strict]
  Replays every task's scripted solution in real Chromium as a demonstration
  takes it, shows each page to the policy as an actor does, and asks the
  policy's heads (the default architecture with every action type) for each
  step. Prints, per task, the steps taken and those the heads cannot
  express, with the reasons. A MiniWoB++ task without a scripted solver
  (oracle.SolvedTasks) is listed as "no solution".
  --suite S      tasks of suite S (default builtin)
  --seeds N      episodes per family, seeds 1..N (a built-in family's on its
                 test site; MiniWoB++ test seeds) (default 2)
  --families L   only these families (comma list)
  --memory-steps K  past steps each page remembers, as an actor's
                 (default 4; 0: no memory, so text read on an earlier
                 page cannot be copied)
  --miniwob-dir D  the MiniWoB++ html tree (default $ASYNCWEBRL_MINIWOB_DIR,
                 else .run/miniwob/html, filled by make setup)
  --tabs N       tabs of one Chromium replaying families side by side
                 (default 3; the findings print in the families' order)
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
	// progress is the line Audit's progress callback gets.
	progress string
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
	vals, rest, err := cmdkit.SubFlags(args, []string{"suite", "seeds", "families", "memory-steps", "miniwob-dir", "tabs"}, []string{"strict"})
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
	tabs := DefaultTabs
	if v, ok := vals["tabs"]; ok {
		if tabs, err = strconv.Atoi(v); err != nil || tabs < 1 {
			return cmdkit.Usage(fmt.Errorf("invalid --tabs %q: want a positive number", v))
		}
	}
	fams := catalog.SuiteFamilies(suite)
	if v := vals["families"]; v != "" {
		if fams, err = catalog.SelectFamilies(suite, strings.Split(v, ",")); err != nil {
			return cmdkit.Usage(err)
		}
	}
	dir := vals["miniwob-dir"]
	if dir == "" {
		if dir = os.Getenv("ASYNCWEBRL_MINIWOB_DIR"); dir == "" {
			dir = filepath.Join(".run", "miniwob", "html")
		}
	}
	findings, err := Audit(ctx, Options{Families: fams, Seeds: seeds, Memory: memory, MiniWoBDir: dir, Tabs: tabs}, func(s string) { fmt.Fprintln(stdout, s) })
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

// Options are an audit's settings.
type Options struct {
	Families []catalog.FamilyInfo
	// Seeds: episodes per family, seeds 1..Seeds (a built-in family's on
	// its test site, a MiniWoB++ task's test seeds).
	Seeds int
	// Memory: past steps each page remembers, as an actor's.
	Memory int
	// MiniWoBDir: the MiniWoB++ html tree, needed when a family is one.
	MiniWoBDir string
	// Tabs: tabs of the one Chromium that replay families side by side
	// (0: DefaultTabs). A replay mostly waits on its page, so tabs finish
	// a suite sooner; each family's seeds stay in a row on one tab.
	Tabs int
}

// DefaultTabs is Options.Tabs's default.
const DefaultTabs = 3

// Audit replays the families' solutions through one browser, each page
// remembering o.Memory past steps as an actor's would.
func Audit(ctx context.Context, o Options, progress func(string)) ([]Finding, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	suite := catalog.SuiteBuiltin
	for _, f := range o.Families {
		if catalog.IsMiniWoB(f.Name) {
			suite = catalog.SuiteAll
		}
	}
	srv, err := webenv.New(webenv.WithAddr("127.0.0.1:0"), webenv.WithSplit(catalog.SplitAll), webenv.WithLogger(quiet),
		webenv.WithSuite(suite), webenv.WithMiniWoBDir(o.MiniWoBDir))
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
	tabs := o.Tabs
	if tabs <= 0 {
		tabs = DefaultTabs
	}
	tabs = min(tabs, max(len(o.Families), 1))
	envs := make([]*env.Env, 0, tabs)
	defer func() {
		for _, e := range envs {
			_ = e.Close()
		}
	}()
	for range tabs {
		e, err := env.New(ctx, b, srv.URL())
		if err != nil {
			return nil, err
		}
		envs = append(envs, e)
	}
	out := make([]Finding, len(o.Families))
	var mu sync.Mutex // progress
	next := make(chan int)
	var wg sync.WaitGroup
	for _, e := range envs {
		wg.Go(func() {
			arch := policy.DefaultArchitecture()
			for i := range next {
				out[i] = auditFamily(ctx, e, &arch, o, o.Families[i])
				if progress != nil {
					mu.Lock()
					progress(out[i].progress)
					mu.Unlock()
				}
			}
		})
	}
	for i := range o.Families {
		select {
		case next <- i:
		case <-ctx.Done():
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("unable to finish the audit: %w", err)
	}
	return out, nil
}

// auditFamily replays o.Seeds episodes of f on e.
func auditFamily(ctx context.Context, e *env.Env, arch *policy.Architecture, o Options, f catalog.FamilyInfo) Finding {
	fd := Finding{Family: f.Name, Tier: f.Tier, Inexpressible: map[string]int{}}
	miniwob := catalog.IsMiniWoB(f.Name)
	if _, ok := oracle.SolverFor(f.Name); miniwob && !ok {
		fd.Problem = "no solution"
		fd.progress = f.Name + ": no solution"
		return fd
	}
	t0 := time.Now()
	for seed := int64(1); seed <= int64(o.Seeds); seed++ {
		fd.Episodes++
		var err error
		if miniwob {
			err = replayMiniWoB(ctx, e, arch, env.TaskRef{Family: f.Name, Seed: catalog.MiniWoBTestSeedFirst + seed - 1}, o.Memory, &fd)
		} else {
			err = replay(ctx, e, arch, env.TaskRef{Family: f.Name, Site: catalog.HeldOutSite(f), Seed: seed}, o.Memory, &fd)
		}
		if err != nil {
			fd.Problem = err.Error()
			break
		}
	}
	fd.progress = fmt.Sprintf("%s: %d steps, %d inexpressible, %d of %d episodes won (%s)", f.Name, fd.Steps, fd.Missed(), fd.Won, fd.Episodes, time.Since(t0).Round(time.Millisecond))
	return fd
}

// stepper takes a solution's steps as the audit does: it shows each page to
// the policy as an actor does (with the actor's memory), asks the heads for
// the step, and steps their version of it, or the scripted one when they
// cannot express it (counted in fd).
type stepper struct {
	e    *env.Env
	arch *policy.Architecture
	fd   *Finding
	mem  *actor.Memory
	obs  *env.Observation
	t    uint32
	seed int64
}

func newStepper(e *env.Env, arch *policy.Architecture, obs *env.Observation, memory int, fd *Finding, seed int64) *stepper {
	// The memory an actor's observations carry (Observation.memory): a
	// value read pages ago is copied from there.
	return &stepper{e: e, arch: arch, fd: fd, mem: actor.NewMemory(memory), obs: obs, seed: seed}
}

// step takes a; an episode it ends in success counts as won.
func (s *stepper) step(ctx context.Context, a env.Action) (*env.StepResult, error) {
	s.fd.Steps++
	ev, err := actor.ObservationEvent(s.obs)
	if err != nil {
		s.fd.Inexpressible["the page cannot be encoded: "+err.Error()]++
		return s.e.Step(ctx, a)
	}
	s.mem.Recall(ev)
	// Points travel in wire-frame pixels, as the actor's events carry them.
	scale := 1.0
	if ev.GetHeight() > 0 && s.obs.Viewport.H > 0 {
		scale = float64(ev.GetHeight()) / float64(s.obs.Viewport.H)
	}
	act, err := actor.DemoEvent(a, scale)
	if err != nil {
		s.fd.Inexpressible["the events cannot carry "+string(a.Type)]++
		return s.e.Step(ctx, a)
	}
	if own, reason := expressed(s.arch, ev, a, act); reason != "" {
		s.fd.Inexpressible[reason]++
	} else if a, err = actor.EnvAction(own, scale); err != nil { // the policy's version of the step
		return nil, err
	} else {
		act = own
	}
	r, err := s.e.Step(ctx, a)
	if err != nil {
		return nil, fmt.Errorf("seed %d step %s: %w", s.seed, a, err)
	}
	if r.Info.Error != "" {
		return r, nil
	}
	s.mem.Remember(s.t, act, ev, r.Reward)
	s.t++
	if r.Obs != nil {
		s.obs = r.Obs
	}
	if r.Done && r.Info.Success {
		s.fd.Won++
	}
	return r, nil
}

// replay plays one episode of a built-in family's scripted solution,
// asking the heads for every step.
func replay(ctx context.Context, e *env.Env, arch *policy.Architecture, task env.TaskRef, memory int, fd *Finding) error {
	p, err := webenv.Generate(task.Family, task.Site, task.Seed)
	if err != nil {
		return err
	}
	obs, err := e.Reset(ctx, task)
	if err != nil {
		return err
	}
	s := newStepper(e, arch, obs, memory, fd, task.Seed)
	for i, st := range p.Plan {
		qctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		acts, err := actor.DemoActions(qctx, e, st)
		cancel()
		if err != nil {
			return fmt.Errorf("seed %d plan step %d (%s %s): %w", task.Seed, i, st.Op, st.Sel, err)
		}
		for _, a := range acts {
			r, err := s.step(ctx, a)
			if err != nil {
				return err
			}
			if r.Info.Error != "" {
				return fmt.Errorf("seed %d step %s: %s", task.Seed, a, r.Info.Error)
			}
			if r.Done {
				return nil
			}
		}
	}
	return nil
}

// replayMiniWoB plays one episode of a MiniWoB++ task's scripted solver,
// asking the heads for every step.
func replayMiniWoB(ctx context.Context, e *env.Env, arch *policy.Architecture, task env.TaskRef, memory int, fd *Finding) error {
	obs, err := e.Reset(ctx, task)
	if err != nil {
		return err
	}
	s := newStepper(e, arch, obs, memory, fd, task.Seed)
	return oracle.NewPlay(e, obs, s.step).Solve(ctx, task)
}

// expressed returns step a (act as an event) on the page of ev as the
// policy's heads express it: the action ActionOf builds from its Choice.
// When they cannot, it returns why instead; reasons are generalised (no
// bids, texts or values) so that a task's steps group under a few.
func expressed(arch *policy.Architecture, ev *eventspb.Observation, a env.Action, act *eventspb.Action) (*eventspb.Action, string) {
	f, err := arch.Featurize(ev)
	if err != nil {
		return nil, "the page cannot be featurized: " + err.Error()
	}
	c, err := arch.ChoiceOf(f, act)
	if err == nil {
		own, err := arch.ActionOf(f, c)
		if err != nil {
			return nil, "the choice cannot be acted: " + err.Error()
		}
		if a.Type == env.Fill && own.GetText() != act.GetText() {
			// ChoiceOf takes a candidate equal up to case for the step;
			// typing it would type another text (a select picks the same
			// option whatever the case).
			return nil, general(a, errors.New("its text is a candidate only in another case"))
		}
		return own, ""
	}
	r := general(a, err)
	if ne, ok := errors.AsType[*policy.NotRepresentableError](err); ok && ne.Kind == policy.TextNotCandidate {
		// Where a copy mechanism would have to find the value.
		r += " (" + whereIs(ev, act.GetText()) + ")"
	}
	return nil, r
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
