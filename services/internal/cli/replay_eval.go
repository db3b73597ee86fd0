package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/replay"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

const replayEvalUsage = `Usage: asyncwebrl replay eval [--policy NAME] [--tiers easy,medium] [--episodes N] [--random] [flags]
  Evaluates the newest published version of a policy (on the weights topic of
  -topic-prefix) greedily on the held-out test site of every family of the
  tiers, N seeded episodes per family, each in a throwaway namespace with its
  own webenv and actor; with --random, the random-init policy of the same
  architecture too, on the same seeds. Prints success per family and writes
  <run-dir>/runs/eval-<time>/report.md. make run ends with it.
  --policy NAME     the policy (default -policy-name, "default")
  --tiers T         comma-separated tiers (default easy,medium)
  --episodes N      episodes per family and model (default 10)
  --seed-base S     first task seed (default 700000: not a seed the curriculum draws)
  --random          evaluate the random-init policy beside it
Flags: -brokers, -topic-prefix, -executors, the Kafka security flags.
`

func runReplayEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	vals, rest, err := subFlags(args, []string{"policy", "tiers", "episodes", "seed-base"}, []string{"random", "help", "h"})
	if err != nil {
		return usageError{err}
	}
	if vals["help"] != "" || vals["h"] != "" {
		fmt.Fprint(stdout, replayEvalUsage)
		return nil
	}
	episodes, seedBase := 10, int64(700000)
	if v := vals["episodes"]; v != "" {
		if episodes, err = strconv.Atoi(v); err != nil || episodes < 1 {
			return usageError{fmt.Errorf("invalid --episodes %q: want a positive number", v)}
		}
	}
	if v := vals["seed-base"]; v != "" {
		if seedBase, err = strconv.ParseInt(v, 10, 64); err != nil || seedBase < 0 {
			return usageError{fmt.Errorf("invalid --seed-base %q: want a non-negative number", v)}
		}
	}
	var tiers []webenv.Tier
	for _, s := range strings.Split(cmp.Or(vals["tiers"], "easy,medium"), ",") {
		t, err := webenv.ParseTier(strings.TrimSpace(s))
		if err != nil {
			return usageError{fmt.Errorf("invalid --tiers: %w", err)}
		}
		tiers = append(tiers, t)
	}
	cfg, err := parse(rest, stdout)
	if err != nil {
		return err
	}
	policy := cmp.Or(vals["policy"], cfg.Actor.PolicyName, "default")
	log := newLogger(cfg, stderr)
	f := kafka.NewFactory(cfg, cfg.Brokers, log)
	if err := f.Ping(ctx, 10*time.Second); err != nil {
		return err
	}
	cat := topics.New(topics.WithPrefix(cfg.TopicPrefix), topics.WithPartitions(int32(cfg.TopicPartitions)), topics.WithReplication(int16(cfg.TopicReplication)))
	onnx, version, err := latestModel(ctx, f, cat, policy, log)
	if err != nil {
		return err
	}
	type model struct {
		label string
		onnx  []byte
	}
	models := []model{{fmt.Sprintf("%s v%d", policy, version), onnx}}
	if vals["random"] == "true" {
		models = append(models, model{"random init", nil})
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	var b strings.Builder
	fmt.Fprintf(&b, "# Held-out evaluation %s\n\n", stamp)
	fmt.Fprintf(&b, "Greedy success on the held-out test site of each family, %d episodes per family and model (seeds %d..%d), policy `%s` version %d from the weights topic `%s`.\n\n",
		episodes, seedBase, seedBase+int64(episodes)-1, policy, version, cat.Name(topics.Weights))
	for _, tier := range tiers {
		res := make([]replay.EvalResult, len(models))
		for i, m := range models {
			fmt.Fprintf(stdout, "evaluating %s on the held-out %s sites (%d episodes per family)...\n", m.label, tier, episodes)
			ec := replay.EvalConfig{Config: cfg, Factory: f, Tier: tier, Episodes: episodes, SeedBase: seedBase, Executors: cfg.Actor.Executors, Log: log,
				Prefix: fmt.Sprintf("%seval-%s-%s-%d.", cfg.TopicPrefix, stamp, tier, i)}
			name := policy
			if m.onnx == nil {
				name = "random-init"
			}
			if res[i], err = replay.Evaluate(ctx, ec, name, m.onnx); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "  %s: %.0f%% in %s\n", m.label, 100*res[i].Rate(), res[i].Took.Round(time.Second))
		}
		fmt.Fprintf(&b, "## %s tier\n\n| family |", tier)
		for _, m := range models {
			fmt.Fprintf(&b, " %s |", m.label)
		}
		b.WriteString("\n|---|" + strings.Repeat("---|", len(models)) + "\n")
		for _, fam := range res[0].Families() {
			fmt.Fprintf(&b, "| %s |", fam)
			for _, r := range res {
				fmt.Fprintf(&b, " %d/%d |", r.Success[fam], r.Episodes[fam])
			}
			b.WriteString("\n")
		}
		b.WriteString("| **all** |")
		for _, r := range res {
			fmt.Fprintf(&b, " **%.0f%%** |", 100*r.Rate())
		}
		b.WriteString("\n\n")
	}
	return writeReport(filepath.Join(cfg.RunDir, "runs", "eval-"+stamp), b.String(), stdout)
}
