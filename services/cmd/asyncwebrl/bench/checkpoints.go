package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/backend"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/evalrun"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

// Checkpoint evaluation: why bench train judges its target off the
// training clock. Judged on each mode's own greedy held-out episodes (a
// fifth of its episodes), the target's window of 40 fills as fast as the
// mode runs episodes: at 24 executors under web, async (4.2 episodes/s)
// confirmed a skill about 50 s after its policy had it, sync (1.6/s) about
// 2 minutes after. So the ratio rewarded throughput twice. With
// --eval-every D, the newest version at D, 2D, ... (a checkpoint) is
// evaluated after the run, with the pipeline stopped, on the same held-out
// episodes for every checkpoint, mode and seed (evalrun, as replay eval
// does), and the time to the target is the first checkpoint whose success
// reaches it while the next one's does too, as the papers' curves judge
// checkpoints.

// evalExecutors are the executors of a checkpoint's evaluation: the same in
// every cell, whatever the run's count.
const evalExecutors = 8

// evalSeedBase is the first seed of the checkpoints' held-out episodes.
const evalSeedBase = 800000

// checkpoint is the newest version published at or before a checkpoint
// time of a run, and what its evaluation found.
type checkpoint struct {
	at       time.Duration // k × --eval-every, from the run's start
	version  uint64
	onnx     []byte
	episodes int // env episodes and steps the run had finished by at
	steps    int
	// success is its held-out success over evaluated episodes; -1 when it
	// was not evaluated.
	success   float64
	evaluated int
	// tasks: each task's successes and episodes in the evaluation, to see
	// which task holds a checkpoint below the target.
	tasks map[string][2]int
}

// versionAt is one published version and when it came out.
type versionAt struct {
	at      time.Duration
	version uint64
	onnx    []byte
}

// progressAt is how many episodes and env steps a run had finished at a
// time.
type progressAt struct {
	at              time.Duration
	episodes, steps int
}

// checkpointer keeps what checkpoints need while a run goes: per interval
// of --eval-every, the newest version published in it (an earlier one is
// never a checkpoint), and the run's progress over time.
type checkpointer struct {
	every    time.Duration
	byBucket map[int64]versionAt
	progress []progressAt
}

func newCheckpointer(every time.Duration) *checkpointer {
	return &checkpointer{every: every, byBucket: map[int64]versionAt{}}
}

// addVersion records version v (its ONNX) published at at.
func (c *checkpointer) addVersion(at time.Duration, v uint64, onnx []byte) {
	if c == nil || c.every <= 0 || len(onnx) == 0 {
		return
	}
	b := int64(at / c.every)
	if cur, ok := c.byBucket[b]; !ok || v > cur.version {
		c.byBucket[b] = versionAt{at: at, version: v, onnx: onnx}
	}
}

// addProgress records the run's totals at at (times arrive in order).
func (c *checkpointer) addProgress(at time.Duration, episodes, steps int) {
	if c == nil || c.every <= 0 {
		return
	}
	c.progress = append(c.progress, progressAt{at: at, episodes: episodes, steps: steps})
}

// list returns the checkpoints at every, 2·every, ... up to wall: at each,
// the newest version published by then (none before the first version).
func (c *checkpointer) list(wall time.Duration) []checkpoint {
	if c == nil || c.every <= 0 {
		return nil
	}
	slices.SortFunc(c.progress, func(a, b progressAt) int { return int(a.at - b.at) })
	buckets := make([]int64, 0, len(c.byBucket))
	for b := range c.byBucket {
		buckets = append(buckets, b)
	}
	slices.Sort(buckets)
	var out []checkpoint
	for k := int64(1); time.Duration(k)*c.every <= wall; k++ {
		at := time.Duration(k) * c.every
		var newest *versionAt
		for _, b := range buckets {
			if v := c.byBucket[b]; v.at <= at && (newest == nil || v.version > newest.version) {
				newest = &v
			}
		}
		if newest == nil {
			continue
		}
		cp := checkpoint{at: at, version: newest.version, onnx: newest.onnx, success: -1}
		// The last progress at or before at.
		i, found := slices.BinarySearchFunc(c.progress, at, func(p progressAt, t time.Duration) int { return int(p.at - t) })
		if found {
			i++
		}
		if i > 0 {
			cp.episodes, cp.steps = c.progress[i-1].episodes, c.progress[i-1].steps
		}
		out = append(out, cp)
	}
	return out
}

// checkpointTarget returns the first checkpoint whose success reaches
// target while the next evaluated one's does too (the last one counts
// alone: nothing came after it), and whether there is one.
func checkpointTarget(cps []checkpoint, target float64) (int, bool) {
	for i, cp := range cps {
		if cp.success < 0 || cp.success < target {
			continue
		}
		if i+1 == len(cps) || cps[i+1].success < 0 || cps[i+1].success >= target {
			return i, true
		}
	}
	return -1, false
}

// evaluateCheckpoints evaluates the run's checkpoints in order, each on the
// same held-out episodes (episodes per family): all of them with --stop cap
// (the run went to the cap, and its curve is drawn to it), else until one
// reaches the target and the next confirms it, the rest unevaluated.
func evaluateCheckpoints(ctx context.Context, cfg *config.Config, f *kafka.Factory, bt trainFlags, id, run string, cps []checkpoint) error {
	suite, err := catalog.ParseSuite(cfg.Suite)
	if err != nil {
		return err
	}
	var fams []catalog.FamilyInfo
	if cfg.Learner.Families != "" {
		if fams, err = catalog.SelectFamilies(suite, config.SplitList(cfg.Learner.Families)); err != nil {
			return err
		}
	}
	// A language model's versions are its trained tensors, not an ONNX
	// graph: each checkpoint is the base model with them swapped in
	// (replay eval's way), the base loaded once for all.
	var lmod *backend.LM
	if cfg.PolicyBackend == "lm" {
		if lmod, err = backend.LoadLM(cfg); err != nil {
			return err
		}
	}
	for i := range cps {
		cp := &cps[i]
		name := fmt.Sprintf("ckpt-%s-%s-v%d", id, run, cp.version)
		ec := evalrun.Config{Config: cfg, Factory: f, Prefix: "bench_eval_" + id + "_" + run + "_" + fmt.Sprint(i) + ".",
			Suite: suite, Families: fams, Tier: bt.tier, Episodes: bt.evalEpisodes, SeedBase: evalSeedBase,
			Executors: evalExecutors, Log: quiet}
		model := cp.onnx
		if lmod != nil {
			p, err := backend.LMPolicy(cfg, lmod, quiet)
			if err != nil {
				return err
			}
			if err := p.Swap(ctx, cp.onnx, cp.version); err != nil {
				return fmt.Errorf("unable to load checkpoint %s (version %d) of the language model: %w", cp.at, cp.version, err)
			}
			ec.Policy, model = p, nil
		}
		res, err := evalrun.Evaluate(ctx, ec, name, model)
		if err != nil {
			return fmt.Errorf("unable to evaluate checkpoint %s (version %d): %w", cp.at, cp.version, err)
		}
		cp.success, cp.onnx = res.Rate(), nil
		cp.tasks = map[string][2]int{}
		for f, n := range res.Episodes {
			cp.evaluated += n
			cp.tasks[f] = [2]int{res.Success[f], n}
		}
		if k, ok := checkpointTarget(cps[:i+1], bt.target); ok && k < i && bt.stop == "judge" {
			break // confirmed by this one; with --stop cap the curve goes on
		}
	}
	return nil
}

// fmtCheckpoints is a run's evaluated checkpoints on one line: "1m v9
// 20%, 2m v19 55%, ...".
func fmtCheckpoints(cps []checkpoint) string {
	var parts []string
	for _, cp := range cps {
		if cp.success < 0 {
			continue
		}
		p := fmt.Sprintf("%s v%d %.0f%%", cp.at.Round(time.Second), cp.version, 100*cp.success)
		if t := fmtTasks(cp.tasks); t != "" {
			p += " (" + t + ")"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return "none evaluated"
	}
	return strings.Join(parts, ", ")
}

// maxTasksShown: a checkpoint lists its tasks' successes only for a task
// set this small (a --tasks set); a whole suite's would drown the line.
const maxTasksShown = 6

// fmtTasks is "task 9/10, task 5/10" in task order, or "" for more than
// maxTasksShown tasks.
func fmtTasks(tasks map[string][2]int) string {
	if len(tasks) == 0 || len(tasks) > maxTasksShown {
		return ""
	}
	names := slices.Sorted(maps.Keys(tasks))
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d/%d", strings.TrimPrefix(n, "miniwob/"), tasks[n][0], tasks[n][1])
	}
	return strings.Join(parts, ", ")
}

// fmtTaskSteps is each task's share of a run's training env steps, largest
// first ("" with more than maxTasksShown tasks): in async mode a task whose
// episodes end sooner comes back sooner, so it can take more than its
// share of the samples.
func fmtTaskSteps(steps map[string]int) string {
	if len(steps) == 0 || len(steps) > maxTasksShown {
		return ""
	}
	total := 0
	names := make([]string, 0, len(steps))
	for n, k := range steps {
		total += k
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if steps[a] != steps[b] {
			return steps[b] - steps[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %.0f%%", strings.TrimPrefix(n, "miniwob/"), 100*float64(steps[n])/float64(total))
	}
	return strings.Join(parts, ", ")
}
