package replaycmd

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/evalrun"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/weightstopic"
	"github.com/asyncwebrl/asyncwebrl/services/learner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

func runTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	vals, rest, err := cmdkit.SubFlags(args, []string{"transitions", "policy-name", "live-policy", "eval-episodes"}, []string{"success-only", "help", "h"})
	if err != nil {
		return cmdkit.Usage(err)
	}
	if vals["help"] != "" || vals["h"] != "" {
		fmt.Fprint(stdout, replayUsage)
		return nil
	}
	topic := vals["transitions"]
	if topic == "" {
		return cmdkit.Usage(fmt.Errorf("replay train needs --transitions TOPIC"))
	}
	stamp := time.Now().UTC().Format("20060102-150405")
	name := vals["policy-name"]
	if name == "" {
		name = "replay-" + stamp
	}
	live := vals["live-policy"]
	if live == "" {
		live = "default"
	}
	episodes := 10
	if v := vals["eval-episodes"]; v != "" {
		if episodes, err = strconv.Atoi(v); err != nil || episodes < 1 {
			return cmdkit.Usage(fmt.Errorf("invalid --eval-episodes %q: want a positive number", v))
		}
	}
	successOnly := vals["success-only"] == "true"
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return err
	}
	log := cmdkit.NewLogger(cfg, stderr)
	f := kafka.NewFactory(cfg, cfg.Brokers, log)
	if err := f.Ping(ctx, 10*time.Second); err != nil {
		return err
	}
	cat := cmdkit.Catalog(cfg, cfg.TopicPrefix)
	l := cfg.Learner
	hp := learner.DefaultHyper()
	if hp.Algo, err = learner.ParseAlgo(l.Algo); err != nil {
		return cmdkit.Usage(err)
	}
	if l.LR > 0 {
		hp.LR = l.LR
	}
	sampling, err := learner.ParseSampling(l.Replay)
	if err != nil {
		return cmdkit.Usage(err)
	}
	svc, err := learner.New(cfg, f, cat, learner.WithLogger(log), learner.WithMetrics(prometheus.NewRegistry()),
		learner.WithPolicyName(name), learner.WithInstanceID("replay-train"), learner.WithHyper(hp), learner.WithSampling(sampling),
		learner.WithBatchSize(l.BatchSize), learner.WithReplayRatio(l.ReplayRatio))
	if err != nil {
		return cmdkit.Usage(err)
	}
	fmt.Fprintf(stdout, "replay train: %s from %s (algo %s, success only %v)\n", name, topic, hp.Algo, successOnly)
	tr, err := svc.TrainOffline(ctx, topic, successOnly, func(s string) { fmt.Fprintln(stdout, "  "+s) })
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "trained %s version %d: %d transitions read, %d samples, %d updates in %s\n",
		name, tr.Version, tr.Records, tr.Samples, tr.Updates, tr.Took.Round(time.Second))

	liveONNX, liveVersion, err := modelAt(ctx, f, cat, live, 0, "", log)
	if err != nil {
		return err
	}
	ec := evalrun.Config{Config: cfg, Factory: f, Episodes: episodes, SeedBase: 900000, Executors: cfg.Actor.Executors, Log: log}
	fmt.Fprintf(stdout, "evaluating %s and %s v%d on the held-out easy sites, %d episodes per family each\n", name, live, liveVersion, episodes)
	ec.Prefix = cfg.TopicPrefix + "eval-" + stamp + "-new."
	newRes, err := evalrun.Evaluate(ctx, ec, name, tr.ONNX)
	if err != nil {
		return err
	}
	ec.Prefix = cfg.TopicPrefix + "eval-" + stamp + "-live."
	liveRes, err := evalrun.Evaluate(ctx, ec, live, liveONNX)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Replay training report %s\n\n", stamp)
	fmt.Fprintf(&b, "A fresh policy `%s` trained from `%s` with no actors running (algorithm %s, success only %v): %d transitions read, %d samples, %d updates, %s; published as version %d.\n\n",
		name, topic, hp.Algo, successOnly, tr.Records, tr.Samples, tr.Updates, tr.Took.Round(time.Second), tr.Version)
	fmt.Fprintf(&b, "Greedy success on the held-out test sites of the easy tier, %d episodes per family, the same seeds for both:\n\n", episodes)
	fmt.Fprintf(&b, "| family | retrained `%s` | live `%s` v%d |\n|---|---|---|\n", name, live, liveVersion)
	for _, fam := range liveRes.Families() {
		fmt.Fprintf(&b, "| %s | %d/%d | %d/%d |\n", fam, newRes.Success[fam], newRes.Episodes[fam], liveRes.Success[fam], liveRes.Episodes[fam])
	}
	fmt.Fprintf(&b, "| **all** | **%.0f%%** | **%.0f%%** |\n\nDifference: %+.0f points.\n", 100*newRes.Rate(), 100*liveRes.Rate(), 100*(newRes.Rate()-liveRes.Rate()))
	return writeReport(filepath.Join(cfg.RunDir, "runs", "replay-"+stamp), b.String(), stdout)
}

// modelAt reads version v of a policy's model, the newest when v is 0.
func modelAt(ctx context.Context, f *kafka.Factory, cat *topics.Catalog, policy string, v uint64, ckptDir string, log *slog.Logger) ([]byte, uint64, error) {
	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) { return f.NewClient("replay-live", opts...) }
	topic := cat.Name(topics.Weights)
	var w *eventspb.Weights
	var err error
	if v == 0 {
		w, err = weightstopic.Latest(ctx, newClient, topic, policy, log, nil)
	} else {
		w, err = weightstopic.Version(ctx, newClient, topic, policy, v, log)
	}
	switch {
	case err != nil:
		return nil, 0, err
	case w == nil && v == 0:
		return nil, 0, fmt.Errorf("unable to compare with policy %q: no version of it on %s", policy, topic)
	case w == nil:
		// The compacted topic keeps the newest version; the learner's
		// checkpoint dir keeps every -keep-checkpoint-every-th.
		b, ok, err := learner.CheckpointModel(ckptDir, v)
		if err != nil {
			return nil, 0, err
		}
		if ok {
			log.Info("version read from the learner's checkpoints (the weights topic no longer holds it)", "policy", policy, "version", v, "dir", ckptDir)
			return b, v, nil
		}
		return nil, 0, fmt.Errorf("unable to find version %d of policy %q on %s nor in %s: never published, or compacted away and not kept (the topic keeps the newest version per policy; the learner's -keep-checkpoint-every keeps more)", v, policy, topic, ckptDir)
	}
	return w.GetOnnx(), w.GetVersion(), nil
}

// writeReport writes report.md into dir (created) and prints it with its
// path.
func writeReport(dir, report string, stdout io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("unable to write the report: %w", err)
	}
	path := filepath.Join(dir, "report.md")
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		return fmt.Errorf("unable to write the report: %w", err)
	}
	fmt.Fprint(stdout, report)
	fmt.Fprintln(stdout, "report:", path)
	return nil
}
