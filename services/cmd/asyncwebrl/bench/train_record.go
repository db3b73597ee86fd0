package bench

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// Recorded runs. A sweep of bench train at 5 seeds over two executor
// counts and two latency profiles takes four to five hours on two cores,
// longer than one sitting, and a run lost to a crash at hour four took the
// whole table with it. --record appends each finished run to a file, one
// JSON object a line, as soon as it ends; --from reads such files back
// (several sittings' cells, or seed ranges of one cell run with -seed) and
// prints the tables, the sweep, its chart and the curves as one invocation
// would have, without training anything.

// recordVersion is the format of a recorded run; a reader refuses others.
const recordVersion = 1

// runRecord is one finished run as --record writes it.
type runRecord struct {
	Format int `json:"format"`
	// What judged the run: runs are merged into one cell only when all of
	// these agree.
	Suite        string  `json:"suite"`
	Tasks        string  `json:"tasks,omitempty"` // the curriculum's -families; "" for every family
	Tier         string  `json:"tier"`
	Target       float64 `json:"target"`
	Window       int     `json:"window"`
	Hold         int     `json:"hold"`
	CapS         float64 `json:"cap_s"`
	EvalEveryS   float64 `json:"eval_every_s"`
	EvalEpisodes int     `json:"eval_episodes"`
	Algo         string  `json:"algo"`
	// GRPONorm is -grpo-norm under -algo grpo ("" under another algo, and
	// before it was recorded), PolicyBackend -policy-backend ("" for
	// features, the default, and before it was recorded): runs that differ
	// in either never merge.
	GRPONorm      string `json:"grpo_norm,omitempty"`
	PolicyBackend string `json:"policy_backend,omitempty"`
	// TimeLimit is a MiniWoB++ run's -miniwob-time-limit ("" before it was
	// recorded, and for the built-in suite: the page's own). Under a
	// latency profile the page's timer counts the injected waits: at 24
	// executors under heavy, sync's lock-step rounds (every executor waits
	// for the slowest page) ran out of click-checkboxes-large's 20 s after
	// two steps an episode, 0% of its first 84 (12-07), so the two modes
	// are compared with it off and runs with and without never merge.
	TimeLimit string `json:"miniwob_time_limit,omitempty"`
	// The cell and the run.
	Latency   string `json:"latency"`
	Executors int    `json:"executors"`
	Mode      string `json:"mode"`
	// Seed is the run's seed (-seed shifted), Run its place among the
	// invocation's runs of its mode (1..K).
	Seed   uint64    `json:"seed"`
	Run    int       `json:"run"`
	Commit string    `json:"commit,omitempty"`
	Ended  time.Time `json:"ended"`

	Reached           bool               `json:"reached"`
	ToTargetS         float64            `json:"to_target_s"`
	WallS             float64            `json:"wall_s"`
	Episodes          int                `json:"episodes"`
	Steps             int                `json:"steps"`
	AllSteps          int                `json:"all_steps"`
	CPU               float64            `json:"cpu"`
	Machine           float64            `json:"machine"`
	Versions          uint64             `json:"versions"`
	ClipFrac          float64            `json:"clip_frac"`
	Staleness         float64            `json:"staleness"`
	BehaviourCapped   float64            `json:"behaviour_capped"`
	RLVersions        int                `json:"rl_versions"`
	RLAtS             float64            `json:"rl_at_s"`
	Demos             bool               `json:"demos"`
	RolloutReached    bool               `json:"rollout_reached"`
	RolloutAtS        float64            `json:"rollout_at_s"`
	FinalRate         float64            `json:"final_rate"`
	FinalN            int                `json:"final_n"`
	StepsPerSecond    float64            `json:"steps_per_second"`
	EpisodesPerSecond float64            `json:"episodes_per_second"`
	TaskSteps         map[string]int     `json:"task_steps,omitempty"`
	Checkpoints       []checkpointRecord `json:"checkpoints,omitempty"`
}

// checkpointRecord is an evaluated checkpoint without its weights.
type checkpointRecord struct {
	AtS       float64           `json:"at_s"`
	Version   uint64            `json:"version"`
	Episodes  int               `json:"episodes"`
	Steps     int               `json:"steps"`
	Success   float64           `json:"success"`
	Evaluated int               `json:"evaluated"`
	Tasks     map[string][2]int `json:"tasks,omitempty"`
}

// newRunRecord is r as a record, judged under bt in cfg's configuration
// with seed the run's seed.
func newRunRecord(r trainRun, bt trainFlags, cfg *config.Config, seed uint64) runRecord {
	// A mean over nothing is NaN (a run that published no version has no
	// clip fraction, one without held-out episodes no final rate), and JSON
	// has no NaN: a 12-07 lm sync run's record failed to encode, and the
	// bench stopped there. Such a mean is 0; its count (versions, final_n)
	// says there was nothing.
	r.clipFrac, r.staleness, r.behaviourCapped = finite(r.clipFrac), finite(r.staleness), finite(r.behaviourCapped)
	r.finalRate, r.cpu, r.machine = finite(r.finalRate), finite(r.cpu), finite(r.machine)
	r.stepsPerSecond, r.episodesPerSecond = finite(r.stepsPerSecond), finite(r.episodesPerSecond)
	rec := runRecord{Format: recordVersion, Suite: cfg.Suite, Tasks: r.cell.tasks, Tier: bt.tier.String(), Target: bt.target,
		Window: bt.window, Hold: bt.hold, CapS: bt.cap.Seconds(), EvalEveryS: bt.evalEvery.Seconds(), EvalEpisodes: bt.evalEpisodes,
		Algo: cfg.Learner.Algo, GRPONorm: grpoNormName(cfg), PolicyBackend: policyBackendName(cfg), TimeLimit: timeLimitName(cfg), Latency: r.cell.latency, Executors: r.cell.executors, Mode: r.mode, Seed: seed, Run: r.seed,
		Commit: buildCommit(), Ended: time.Now().UTC().Truncate(time.Second),
		Reached: r.reached, ToTargetS: r.toTarget.Seconds(), WallS: r.wall.Seconds(), Episodes: r.episodes, Steps: r.steps,
		AllSteps: r.allSteps, CPU: r.cpu, Machine: r.machine, Versions: r.versions, ClipFrac: r.clipFrac, Staleness: r.staleness,
		BehaviourCapped: r.behaviourCapped, RLVersions: r.rlVersions, RLAtS: r.rlAt.Seconds(), Demos: r.demos,
		RolloutReached: r.rolloutReached, RolloutAtS: r.rolloutAt.Seconds(), FinalRate: r.finalRate, FinalN: r.finalN,
		StepsPerSecond: r.stepsPerSecond, EpisodesPerSecond: r.episodesPerSecond, TaskSteps: r.taskSteps}
	for _, c := range r.checkpoints {
		rec.Checkpoints = append(rec.Checkpoints, checkpointRecord{AtS: c.at.Seconds(), Version: c.version, Episodes: c.episodes,
			Steps: c.steps, Success: finite(c.success), Evaluated: c.evaluated, Tasks: c.tasks})
	}
	return rec
}

// run is the record as a run (without the learning curve and the
// propagation delays, which no table of --from prints).
func (rec runRecord) run() trainRun {
	secs := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	r := trainRun{mode: rec.Mode, reached: rec.Reached, toTarget: secs(rec.ToTargetS), wall: secs(rec.WallS), episodes: rec.Episodes,
		steps: rec.Steps, allSteps: rec.AllSteps, cpu: rec.CPU, machine: rec.Machine, versions: rec.Versions, clipFrac: rec.ClipFrac,
		staleness: rec.Staleness, behaviourCapped: rec.BehaviourCapped, rlVersions: rec.RLVersions, rlAt: secs(rec.RLAtS),
		demos: rec.Demos, rolloutReached: rec.RolloutReached, rolloutAt: secs(rec.RolloutAtS), finalRate: rec.FinalRate,
		finalN: rec.FinalN, seed: int(rec.Seed), stepsPerSecond: rec.StepsPerSecond, episodesPerSecond: rec.EpisodesPerSecond,
		cell: trainCell{latency: rec.Latency, executors: rec.Executors, tasks: rec.Tasks}, taskSteps: rec.TaskSteps}
	for _, c := range rec.Checkpoints {
		r.checkpoints = append(r.checkpoints, checkpoint{at: secs(c.AtS), version: c.Version, episodes: c.Episodes, steps: c.Steps,
			success: c.Success, evaluated: c.Evaluated, tasks: c.Tasks})
	}
	return r
}

// judging is what the record's run was judged by, as it prints: two runs
// of one cell must agree on it.
func (rec runRecord) judging() string {
	limit := ""
	if catalog.Suite(rec.Suite) == catalog.SuiteMiniWoB {
		limit = ", MiniWoB++ time limit " + cmp.Or(rec.TimeLimit, "page")
	}
	algo := rec.Algo
	if rec.GRPONorm != "" {
		algo += " (" + rec.GRPONorm + " norm)"
	}
	if rec.PolicyBackend != "" {
		algo += ", policy backend " + rec.PolicyBackend
	}
	return fmt.Sprintf("suite %s, tier %s, target %g, window %d, hold %d, cap %s, checkpoints every %s of %d episodes a task, algo %s%s",
		rec.Suite, rec.Tier, rec.Target, rec.Window, rec.Hold, time.Duration(rec.CapS*float64(time.Second)),
		time.Duration(rec.EvalEveryS*float64(time.Second)), rec.EvalEpisodes, algo, limit)
}

// grpoNormName is cfg's -grpo-norm as recorded: "" unless -algo is grpo
// or grpo-plain.
func grpoNormName(cfg *config.Config) string {
	if !strings.HasPrefix(cfg.Learner.Algo, "grpo") {
		return ""
	}
	return cmp.Or(cfg.Learner.GRPONorm, "step")
}

// policyBackendName is cfg's -policy-backend as recorded: "" for features.
func policyBackendName(cfg *config.Config) string {
	if cfg.PolicyBackend == "" || cfg.PolicyBackend == "features" {
		return ""
	}
	return cfg.PolicyBackend
}

// timeLimitName is cfg's -miniwob-time-limit as recorded: "" for the
// built-in suite, which has no page timer.
func timeLimitName(cfg *config.Config) string {
	if catalog.Suite(cfg.Suite) != catalog.SuiteMiniWoB {
		return ""
	}
	return config.MiniWoBTimeLimitName(cfg.Actor.MiniWoBTimeLimit)
}

// buildCommit is the binary's VCS revision, short, "+dirty" when built
// from a modified tree; "" when unknown (a test binary).
func buildCommit() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}

// recorder appends records to a file, one line each, synced: a crash
// later in the sweep keeps every run before it.
type recorder struct{ path string }

func (w recorder) write(rec runRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("unable to encode the run's record: %w", err)
	}
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("unable to record the run: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("unable to record the run in %s: %w", w.path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("unable to record the run in %s: %w", w.path, err)
	}
	return f.Close()
}

// readRecords reads the runs recorded in r (named name in errors).
func readRecords(r io.Reader, name string) ([]runRecord, error) {
	var out []runRecord
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		b := sc.Bytes()
		if len(strings.TrimSpace(string(b))) == 0 {
			continue
		}
		var rec runRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("unable to read %s line %d: %w", name, line, err)
		}
		if rec.Format != recordVersion {
			return nil, fmt.Errorf("unable to read %s line %d: record format %d, want %d", name, line, rec.Format, recordVersion)
		}
		if rec.Mode != "async" && rec.Mode != "sync" {
			return nil, fmt.Errorf("unable to read %s line %d: mode %q, want async or sync", name, line, rec.Mode)
		}
		if _, err := webenv.ParseProfile(rec.Latency); err != nil {
			return nil, fmt.Errorf("unable to read %s line %d: %w", name, line, err)
		}
		if _, err := catalog.ParseTier(rec.Tier); err != nil {
			return nil, fmt.Errorf("unable to read %s line %d: %w", name, line, err)
		}
		if rec.Executors < 1 || rec.Target <= 0 || rec.Target > 1 || rec.WallS <= 0 {
			return nil, fmt.Errorf("unable to read %s line %d: executors %d, target %g, wall %gs: not a run", name, line, rec.Executors, rec.Target, rec.WallS)
		}
		out = append(out, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("unable to read %s: %w", name, err)
	}
	return out, nil
}

// mergedCell is one cell of recorded runs with what judged them.
type mergedCell struct {
	cell trainCell
	bt   trainFlags // the judging flags the cell's records agree on
	runs []trainRun
}

// mergeRecords groups records into cells (a latency profile, an executor
// count and a task set), each judged alike, and refuses a run recorded
// twice (the same cell, mode and seed: it would count twice in the
// medians). Cells come task set by task set (first seen first), each by
// the profile's median delay and then the executor count.
func mergeRecords(recs []runRecord, names []string) ([]mergedCell, error) {
	var cells []*mergedCell
	byCell := map[trainCell]*mergedCell{}
	type judged struct{ judging, where string } // a cell's first record's
	first := map[trainCell]judged{}
	seen := map[string]string{}
	taskOrder := map[string]int{}
	for i, rec := range recs {
		r := rec.run()
		where := names[i]
		key := fmt.Sprintf("%v/%s/%d", r.cell, rec.Mode, rec.Seed)
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("unable to merge the runs: %s seed %d at %s, %d executors (tasks %q) is recorded twice (%s and %s)",
				rec.Mode, rec.Seed, rec.Latency, rec.Executors, rec.Tasks, prev, where)
		}
		seen[key] = where
		mc, ok := byCell[r.cell]
		if !ok {
			tier, _ := catalog.ParseTier(rec.Tier)
			mc = &mergedCell{cell: r.cell, bt: trainFlags{modes: []string{"async", "sync"}, target: rec.Target, tier: tier,
				window: rec.Window, hold: rec.Hold, cap: time.Duration(rec.CapS * float64(time.Second)),
				evalEvery: time.Duration(rec.EvalEveryS * float64(time.Second)), evalEpisodes: rec.EvalEpisodes}}
			byCell[r.cell] = mc
			first[r.cell] = judged{rec.judging(), where}
			cells = append(cells, mc)
			if _, ok := taskOrder[rec.Tasks]; !ok {
				taskOrder[rec.Tasks] = len(taskOrder)
			}
		} else if f, j := first[r.cell], rec.judging(); j != f.judging {
			return nil, fmt.Errorf("unable to merge the runs of %s, %d executors (tasks %q): judged differently:\n  %s (%s)\n  %s (%s)",
				rec.Latency, rec.Executors, rec.Tasks, f.judging, f.where, j, where)
		}
		mc.runs = append(mc.runs, r)
	}
	delay := func(l string) time.Duration { p, _ := webenv.ParseProfile(l); return p.Server.Median() }
	slices.SortStableFunc(cells, func(a, b *mergedCell) int {
		return cmp.Or(cmp.Compare(taskOrder[a.cell.tasks], taskOrder[b.cell.tasks]),
			cmp.Compare(delay(a.cell.latency), delay(b.cell.latency)), cmp.Compare(a.cell.executors, b.cell.executors))
	})
	out := make([]mergedCell, len(cells))
	for i, c := range cells {
		slices.SortStableFunc(c.runs, func(a, b trainRun) int { return cmp.Or(cmp.Compare(a.seed, b.seed), cmp.Compare(a.mode, b.mode)) })
		out[i] = *c
	}
	return out, nil
}

// trainFromRecords is bench train --from: the recorded runs of files,
// printed cell by cell as one invocation would print them, then the sweep,
// its chart (plot) and the checkpoint curves (curves).
func trainFromRecords(files []string, plot, curves string, stdout io.Writer) error {
	var recs []runRecord
	var names []string
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("unable to read the recorded runs: %w", err)
		}
		rs, err := readRecords(f, path)
		f.Close()
		if err != nil {
			return err
		}
		for range rs {
			names = append(names, path)
		}
		recs = append(recs, rs...)
	}
	if len(recs) == 0 {
		return errors.New("unable to merge the runs: no run is recorded in " + strings.Join(files, ", "))
	}
	cells, err := mergeRecords(recs, names)
	if err != nil {
		return err
	}
	commits := map[string]bool{}
	for _, rec := range recs {
		commits[cmp.Or(rec.Commit, "unknown")] = true
	}
	fmt.Fprintf(stdout, "bench train: %d recorded runs from %s, %d cells, built from %s\n", len(recs), strings.Join(files, ", "), len(cells), strings.Join(slices.Sorted(maps.Keys(commits)), ", "))
	var all []trainRun
	var list []trainCell
	for i, c := range cells {
		tasks := cmp.Or(c.cell.tasks, "every family")
		fmt.Fprintf(stdout, "\ncell %d of %d: latency profile %s, %d executors, tasks %s; %s held-out ≥ %.0f%%, cap %s\n",
			i+1, len(cells), c.cell.latency, c.cell.executors, tasks, c.bt.tier, 100*c.bt.target, c.bt.cap)
		printTrainRuns(stdout, c.runs, c.bt)
		printTrainSummary(stdout, c.runs, c.bt)
		all = append(all, c.runs...)
		list = append(list, c.cell)
	}
	if curves != "" {
		paths, err := writeCheckpointCurves(curves, all, cells[0].bt.target)
		if err != nil {
			return err
		}
		if len(paths) > 0 {
			fmt.Fprintf(stdout, "checkpoint curves: %s\n", strings.Join(paths, ", "))
		}
	}
	if len(cells) > 1 {
		fmt.Fprintln(stdout)
		printSweep(stdout, all, list, func(c trainCell) float64 {
			return cells[slices.IndexFunc(cells, func(m mergedCell) bool { return m.cell == c })].bt.target
		})
		if plot != "" {
			if err := sweepChart(all, list).WriteFile(plot); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "the ratio per cell: %s\n", plot)
		}
	}
	return nil
}

// finite is x, or 0 when x is NaN or infinite.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
