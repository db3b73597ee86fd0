package replaycmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/backend"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/evalrun"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/learner"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

const replayEvalUsage = `Usage: asyncwebrl replay eval [--suite S] [--tasks a,b,...] [--tiers easy,medium] [--episodes N] [--version V] [--random] [flags]
  Evaluates the newest published version of a policy, or version V, on the
  weights topic of -topic-prefix, greedily on held-out episodes, N seeded episodes per task:
  a built-in family on its test site, a MiniWoB++ task on its test seeds
  (1,000,000,000 + seed base + i; training only ever sees seeds below
  1,000,000,000). Each model runs in a throwaway namespace with its own webenv
  and actor; with --random, the random-init policy of the same architecture
  too, on the same seeds, sampling its actions (the random policy over the
  action space: a random network's argmax is one arbitrary fixed policy).
  -policy-backend=lm evaluates the run's newest version of the language
  model beside its base model (zero-shot), on the same seeds; openai the
  served model as it is.
  Prints success per task and writes
  <run-dir>/runs/eval-<time>/report.md. make run ends with it.
  --suite S         builtin (default -suite, env ASYNCWEBRL_SUITE), miniwob or all:
                    the tasks of the suite the action space can express
  --tasks a,b       only these tasks, whatever their tier (MiniWoB++ ones with or
                    without "miniwob/"); a task beyond the action space is an error
  --policy NAME     the policy (default -policy-name, "default")
  --tiers T         comma-separated tiers (default every tier up to -max-tier, as
                    the run trained: make run ARGS='-max-tier=hard' evaluates hard)
  --episodes N      episodes per task and model (default 10)
  --version V       evaluate version V, not the newest (a checkpoint: the end of
                    a language model's behaviour cloning, say); an error when the
                    compacted weights topic no longer holds it
  --seed-base S     first task seed (default 700000: not a seed the curriculum draws)
  --no-zero-shot    -policy-backend=lm: leave out the base model (its column
                    does not change between versions of one run's seeds)
  --random          evaluate the random-init policy beside it (sampled)
  --keep            keep each evaluation's topics (default: deleted at its end)
                    and print their prefix: -target=recorder -topic-prefix=<it>
                    archives the episodes in ClickHouse to read back
Flags: -brokers, -topic-prefix, -executors, -miniwob-dir, the Kafka security flags.
`

func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	vals, rest, err := cmdkit.SubFlags(args, []string{"policy", "tiers", "tasks", "episodes", "seed-base", "version"}, []string{"random", "keep", "no-zero-shot", "help", "h"})
	if err != nil {
		return cmdkit.Usage(err)
	}
	if vals["help"] != "" || vals["h"] != "" {
		fmt.Fprint(stdout, replayEvalUsage)
		return nil
	}
	episodes, seedBase := 10, int64(700000)
	if v := vals["episodes"]; v != "" {
		if episodes, err = strconv.Atoi(v); err != nil || episodes < 1 {
			return cmdkit.Usage(fmt.Errorf("invalid --episodes %q: want a positive number", v))
		}
	}
	if v := vals["seed-base"]; v != "" {
		if seedBase, err = strconv.ParseInt(v, 10, 64); err != nil || seedBase < 0 {
			return cmdkit.Usage(fmt.Errorf("invalid --seed-base %q: want a non-negative number", v))
		}
	}
	var want uint64 // 0: the newest
	if v := vals["version"]; v != "" {
		if want, err = strconv.ParseUint(v, 10, 64); err != nil || want == 0 {
			return cmdkit.Usage(fmt.Errorf("invalid --version %q: want a published version (1 or more)", v))
		}
	}
	// --suite is the binary's -suite (config.Parse reads it from rest): the
	// same flag and env var as the run that trained the policy.
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return err
	}
	groups, err := evalGroups(cfg, vals["tasks"], vals["tiers"])
	if err != nil {
		return err
	}
	policy := cmp.Or(vals["policy"], cfg.Actor.PolicyName, "default")
	log := cmdkit.NewLogger(cfg, stderr)
	f := kafka.NewFactory(cfg, cfg.Brokers, log)
	if err := f.Ping(ctx, 10*time.Second); err != nil {
		return err
	}
	cat := cmdkit.Catalog(cfg, cfg.TopicPrefix)
	type model struct {
		label  string
		onnx   []byte
		policy actor.Policy
	}
	var models []model
	var version uint64
	name := policy // the run's, on its weights topic
	if cfg.PolicyBackend != "features" {
		// A language model: the served one (openai) as it is; the lm
		// backend's base model and the run's newest version of it.
		var lmod *backend.LM // the lm backend's model, loaded once for both
		var p actor.Policy
		var err error
		if cfg.PolicyBackend == "lm" {
			if lmod, err = backend.LoadLM(cfg); err == nil {
				p, err = backend.LMPolicy(cfg, lmod, log)
			}
		} else {
			p, err = backend.Policy(cfg, log)
		}
		if err != nil {
			return err
		}
		served := cfg.OpenAI.Model
		if cfg.PolicyBackend == "lm" {
			served = strings.TrimSuffix(filepath.Base(cfg.LM.Model), ".gguf")
		}
		policy = cfg.PolicyBackend + "-" + strings.Map(func(r rune) rune {
			if r == '.' || r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return '-'
		}, served)
		label := policy
		if cfg.PolicyBackend == "lm" {
			// A run trains the lm backend's top blocks: its newest
			// version beside the base model (zero-shot), same seeds.
			blob, v, err := modelAt(ctx, f, cat, name, want, learner.CheckpointDir(cfg.RunDir, cfg.TopicPrefix, name), log)
			if err == nil {
				tp, err := backend.LMPolicy(cfg, lmod, log)
				if err != nil {
					return err
				}
				if err := tp.Swap(ctx, blob, v); err != nil {
					return fmt.Errorf("unable to load version %d of %q: %w", v, name, err)
				}
				version = v
				models = append(models, model{label: fmt.Sprintf("%s v%d", policy, v), policy: tp})
				label = policy + " zero-shot"
			} else if want != 0 {
				return err
			} else {
				log.Info("no trained version on the weights topic: evaluating the base model alone", "policy", name, "err", err)
			}
		}
		if vals["no-zero-shot"] != "true" || len(models) == 0 {
			models = append(models, model{label: label, policy: p})
		}
	} else {
		onnx, v, err := modelAt(ctx, f, cat, policy, want, learner.CheckpointDir(cfg.RunDir, cfg.TopicPrefix, policy), log)
		if err != nil {
			return err
		}
		version = v
		models = append(models, model{label: fmt.Sprintf("%s v%d", policy, version), onnx: onnx})
	}
	if vals["random"] == "true" {
		models = append(models, model{label: "random init (sampled)"})
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	var b strings.Builder
	fmt.Fprintf(&b, "# Held-out evaluation %s\n\n", stamp)
	builtin, miniwob := false, false
	for _, g := range groups {
		for _, f := range g.fams {
			miniwob = miniwob || catalog.IsMiniWoB(f.Name)
			builtin = builtin || !catalog.IsMiniWoB(f.Name)
		}
	}
	var where []string
	if builtin {
		where = append(where, fmt.Sprintf("a built-in family on its test site, seeds %d..%d", seedBase, seedBase+int64(episodes)-1))
	}
	if miniwob {
		limit := "each page's own time limit (10 s for most tasks), as the published tables ran them"
		switch d := cfg.Actor.MiniWoBTimeLimit; d {
		case 0:
		case env.NoMiniWoBTimeLimit:
			limit = "no time limit (-miniwob-time-limit=off: 10^6 ms, BrowserGym's protocol for language-model agents; the published tables ran each page's own)"
		default:
			limit = fmt.Sprintf("a time limit of %s (-miniwob-time-limit; the published tables ran each page's own)", d)
		}
		where = append(where, fmt.Sprintf("a MiniWoB++ task on its test seeds %d..%d under %s (score: the mean raw reward, an episode the step budget cut counting −1 as the page's timeout would; strict: raw reward 1; raw>0; decayed: the mean time-decayed reward)",
			catalog.MiniWoBSeed(catalog.SplitTest, seedBase), catalog.MiniWoBSeed(catalog.SplitTest, seedBase+int64(episodes)-1), limit))
	}
	fmt.Fprintf(&b, "Greedy success on held-out episodes of each task of suite %s: %s. %d episodes per task and model, policy `%s` version %d from the weights topic `%s`.\n\n",
		cfg.Suite, strings.Join(where, "; "), episodes, policy, version, cat.Name(topics.Weights))
	for _, g := range groups {
		res := make([]evalrun.Result, len(models))
		for i, m := range models {
			fmt.Fprintf(stdout, "evaluating %s on the held-out %s tasks (%d tasks, %d episodes each)...\n", m.label, g.tier, len(g.fams), episodes)
			ec := evalrun.Config{Config: cfg, Factory: f, Suite: g.suite, Families: g.fams, Tier: g.tier, Episodes: episodes, SeedBase: seedBase,
				Executors: cfg.Actor.Executors, Log: log, Prefix: fmt.Sprintf("%seval-%s-%s-%d.", cfg.TopicPrefix, stamp, g.tier, i),
				Sampled: m.onnx == nil && m.policy == nil, Keep: vals["keep"] == "true", Policy: m.policy}
			name := policy
			if ec.Sampled {
				name = "random-init"
			}
			if res[i], err = evalrun.Evaluate(ctx, ec, name, m.onnx); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "  %s: %.0f%% in %s\n", m.label, 100*res[i].Rate(), res[i].Took.Round(time.Second))
			if ec.Keep {
				fmt.Fprintf(stdout, "  kept its topics: -topic-prefix=%s\n", ec.Prefix)
			}
		}
		writeEvalTable(&b, g.tier, res, func(i int) string { return models[i].label })
	}
	return writeReport(filepath.Join(cfg.RunDir, "runs", "eval-"+stamp), b.String(), stdout)
}

// evalGroup is the tasks of one tier, evaluated together.
type evalGroup struct {
	tier  catalog.Tier
	suite catalog.Suite
	fams  []catalog.FamilyInfo
}

// evalGroups resolves --tasks (any tier), else --tiers, else the run's
// -families, else every tier up to -max-tier, to the suite's tasks the
// action space can express, by tier. The default was easy and medium until 12-05, so a run trained to
// the hard tier had its hard families left out of make run's evaluation.
func evalGroups(cfg *config.Config, tasks, tierList string) ([]evalGroup, error) {
	suite, err := catalog.ParseSuite(cfg.Suite)
	if err != nil {
		return nil, cmdkit.Usage(fmt.Errorf("invalid --suite: %w", err))
	}
	var fams []catalog.FamilyInfo
	var tiers []catalog.Tier
	if tasks == "" && tierList == "" {
		// A run that trained some families (-families) is evaluated on
		// them, not on its whole suite.
		tasks = cfg.Learner.Families
	}
	if tasks != "" {
		if fams, err = catalog.SelectFamilies(suite, config.SplitList(tasks)); err != nil {
			return nil, cmdkit.Usage(fmt.Errorf("invalid --tasks: %w", err))
		}
		if len(fams) == 0 {
			return nil, cmdkit.Usage(fmt.Errorf("invalid --tasks %q: name at least one task", tasks))
		}
		for _, f := range fams {
			if !slices.Contains(tiers, f.Tier) {
				tiers = append(tiers, f.Tier)
			}
		}
		slices.Sort(tiers)
	} else {
		maxTier, err := catalog.ParseTier(cmp.Or(cfg.Learner.MaxTier, "hard"))
		if err != nil {
			return nil, cmdkit.Usage(fmt.Errorf("invalid -max-tier: %w", err))
		}
		for _, s := range strings.Split(cmp.Or(tierList, "easy,medium,hard"), ",") {
			t, err := catalog.ParseTier(strings.TrimSpace(s))
			if err != nil {
				return nil, cmdkit.Usage(fmt.Errorf("invalid --tiers: %w", err))
			}
			// The default stops at the tier the run trained up to;
			// tiers asked for by name are evaluated.
			if tierList == "" && t > maxTier {
				continue
			}
			tiers = append(tiers, t)
		}
		fams = catalog.Schedulable(suite)
	}
	var out []evalGroup
	for _, t := range tiers {
		g := evalGroup{tier: t, suite: suite}
		for _, f := range fams {
			if f.Tier == t {
				g.fams = append(g.fams, f)
			}
		}
		if len(g.fams) > 0 {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		return nil, cmdkit.Usage(fmt.Errorf("no task of suite %s in tiers %v to evaluate", suite, tiers))
	}
	return out, nil
}

// writeEvalTable writes one tier's table: per task, each model's greedy
// success; for MiniWoB++ tasks as the field reports them: the score (mean
// raw reward), strict success (raw reward 1), success as raw reward > 0,
// the mean time-decayed reward and the unfinished episodes (the page's
// timeouts + those the step budget cut, each scored −1), with the published
// human and CC-Net scores beside them.
func writeEvalTable(b *strings.Builder, tier catalog.Tier, res []evalrun.Result, label func(int) string) {
	miniwob := false
	for _, fam := range res[0].Families() {
		miniwob = miniwob || catalog.IsMiniWoB(fam)
	}
	pub := catalog.MiniWoBPublishedScores()
	published := []string{catalog.PublishedHuman, catalog.PublishedCCNet}
	fmt.Fprintf(b, "## %s tier\n\n| task |", tier)
	cols := 0
	for i := range res {
		if miniwob {
			fmt.Fprintf(b, " %s score | %s strict | %s raw>0 | %s decayed | %s timeouts+cut |", label(i), label(i), label(i), label(i), label(i))
			cols += 5
		} else {
			fmt.Fprintf(b, " %s |", label(i))
			cols++
		}
	}
	if miniwob {
		for _, col := range published {
			fmt.Fprintf(b, " %s (published) |", col)
		}
		cols += len(published)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", cols) + "\n")
	for _, fam := range res[0].Families() {
		fmt.Fprintf(b, "| %s |", fam)
		for _, r := range res {
			if miniwob {
				fmt.Fprintf(b, " %.2f | %d/%d | %d/%d | %.2f | %d+%d |", r.MeanRaw(fam), r.Strict[fam], r.Episodes[fam],
					r.Success[fam], r.Episodes[fam], r.MeanDecayed(fam), r.TimedOut[fam], r.Cut[fam])
			} else {
				fmt.Fprintf(b, " %d/%d |", r.Success[fam], r.Episodes[fam])
			}
		}
		if miniwob {
			for _, col := range published {
				fmt.Fprintf(b, " %s |", pub.Cell(fam, col))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("| **all** |")
	for _, r := range res {
		if miniwob {
			fmt.Fprintf(b, " **%.2f** | **%.0f%%** | **%.0f%%** | | |", r.MeanScore(), 100*r.StrictRate(), 100*r.Rate())
		} else {
			fmt.Fprintf(b, " **%.0f%%** |", 100*r.Rate())
		}
	}
	if miniwob {
		b.WriteString(strings.Repeat(" |", len(published)))
	}
	b.WriteString("\n\n")
	if miniwob {
		for i, r := range res {
			var dev, other []string
			for _, fam := range r.Families() {
				if _, ok := catalog.MiniWoBDevelopment(fam); ok {
					dev = append(dev, fam)
				} else {
					other = append(other, fam)
				}
			}
			fmt.Fprintf(b, "%s: development set %s; other tasks %s.\n", label(i), meanOver(r, dev), meanOver(r, other))
		}
		b.WriteString("\n")
		b.WriteString("Score: the mean raw reward per task, in [−1, 1], as the published tables count it; \"all\" is its mean over tasks. " +
			"Strict: raw reward 1, MiniWoB++'s success. raw>0 counts a partly right answer (find-greatest's 0.1) as success.\n")
		fmt.Fprintf(b, "Published columns (not measured here; \"-\": not reported): %s\n\n", pub.Source)
	}
}

// meanOver is the mean score of r over tasks, and how many of them beat
// the published human score.
func meanOver(r evalrun.Result, tasks []string) string {
	if len(tasks) == 0 {
		return "(no task)"
	}
	pub := catalog.MiniWoBPublishedScores()
	var sum float64
	beat := 0
	for _, fam := range tasks {
		sum += r.MeanRaw(fam)
		if h, ok := pub.Score(fam, catalog.PublishedHuman); ok && r.MeanRaw(fam) > h {
			beat++
		}
	}
	return fmt.Sprintf("%.2f over %d (%d above the human score)", sum/float64(len(tasks)), len(tasks), beat)
}
