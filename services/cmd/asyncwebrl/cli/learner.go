package cli

import (
	"cmp"
	"fmt"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/backend"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/casstore"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/learner"
	"github.com/asyncwebrl/asyncwebrl/services/lm"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/services/reporter"
)

func newLearner(d deps) (app.Service, error) {
	l := d.cfg.Learner
	hp := learner.DefaultHyper()
	var err error
	if l.Algo != "" {
		if hp.Algo, err = learner.ParseAlgo(l.Algo); err != nil {
			return nil, cmdkit.Usage(err)
		}
	}
	if l.LR > 0 {
		hp.LR = l.LR
	}
	if l.GRPONorm != "" {
		if hp.GRPONorm, err = learner.ParseNorm(l.GRPONorm); err != nil {
			return nil, cmdkit.Usage(err)
		}
	}
	sampling := learner.FIFO
	if l.Replay != "" {
		if sampling, err = learner.ParseSampling(l.Replay); err != nil {
			return nil, cmdkit.Usage(err)
		}
	}
	policyName := d.cfg.Actor.PolicyName
	opts := []learner.Option{
		learner.WithLogger(d.log),
		learner.WithMetrics(d.metrics),
		learner.WithPolicyName(policyName),
		learner.WithInstanceID(d.cfg.InstanceID),
		learner.WithHyper(hp),
		learner.WithSeed(cmp.Or(d.cfg.Seed, policy.InitSeed)),
		learner.WithTrainCore(l.Core),
		learner.WithArchitecture(d.cfg.FreshArchitecture()),
		learner.WithSampling(sampling),
		learner.WithMaxPolicyLag(l.MaxPolicyLag),
		learner.WithMaxStaleness(l.MaxStaleness),
		learner.WithBCUpdates(l.BCUpdates),
		learner.WithDemoMix(l.DemoMix),
		learner.WithCheckpointDir(learner.CheckpointDir(d.cfg.RunDir, d.cfg.TopicPrefix, policyName)),
		learner.WithKeepCheckpoints(uint64(l.KeepCheckpointEvery)),
		// A model server's weights are not the learner's to train.
		learner.WithTraining(d.cfg.PolicyBackend != "openai"),
	}
	if d.cfg.PolicyBackend == "lm" {
		l, err := backend.LoadLM(d.cfg)
		if err != nil {
			return nil, err
		}
		// The actors' frozen-block states are read wherever they were kept
		// (-lm-frozen-states on the actors), whatever this process's flag.
		frozen, err := casstore.Open(config.FrozenDir(d.cfg.RunDir))
		if err != nil {
			return nil, err
		}
		opts = append(opts, learner.WithLanguageModel(learner.LMConfig{Model: l.Model, Tokenizer: l.Tokenizer, EOS: l.EOS,
			Set: action.Set(d.cfg.ActionSet), Answer: lm.Answer(d.cfg.LM.Answer), TrainBlocks: d.cfg.LM.TrainBlocks, LR: d.cfg.LM.LR, KL: d.cfg.LM.KL,
			FrozenCache: frozenCacheBytes(d.cfg.LM.FrozenCacheMB), Frozen: frozen}))
	}
	if d.cfg.Loop == "sync" {
		// One batch of episodes per version: the actors' executors.
		opts = append(opts, learner.WithSyncBatches(d.cfg.Actor.Executors))
	}
	if l.BatchSize > 0 {
		opts = append(opts, learner.WithBatchSize(l.BatchSize))
	}
	if l.ReplayRatio > 0 {
		opts = append(opts, learner.WithReplayRatio(l.ReplayRatio))
	}
	if l.PublishEvery > 0 {
		opts = append(opts, learner.WithPublishEvery(l.PublishEvery))
	}
	if l.GroupSize > 0 {
		opts = append(opts, learner.WithGroupSize(l.GroupSize))
	}
	if l.LeaseTimeout > 0 {
		opts = append(opts, learner.WithLeaseTimeout(l.LeaseTimeout))
	}
	if l.Curriculum {
		suite, err := catalog.ParseSuite(d.cfg.Suite)
		if err != nil {
			return nil, cmdkit.Usage(fmt.Errorf("invalid -suite: %w", err))
		}
		c := learner.CurriculumConfig{InFlight: l.InFlight, EvalFraction: l.EvalFraction, Demos: l.Demos, Suite: suite, Seed: d.cfg.Seed, Families: config.SplitList(l.Families), FocusBy: l.CurriculumFocus}
		switch l.MaxTier {
		case "easy":
			c.MaxTier = catalog.Easy
		case "medium":
			c.MaxTier = catalog.Medium
		}
		opts = append(opts, learner.WithCurriculum(c))
	}
	return learner.New(d.cfg, d.kafka, d.catalog, opts...)
}

func newReporter(d deps) (app.Service, error) {
	c := d.cfg
	settings := map[string]string{
		"algo": c.Learner.Algo, "grpo norm": c.Learner.GRPONorm, "replay": c.Learner.Replay, "batch size": fmt.Sprint(c.Learner.BatchSize),
		"learning rate": fmt.Sprint(c.Learner.LR), "replay ratio": fmt.Sprint(c.Learner.ReplayRatio), "publish every": fmt.Sprint(c.Learner.PublishEvery),
		"demonstrations": fmt.Sprint(c.Learner.Demos), "curriculum focus": c.Learner.CurriculumFocus, "demo mix": fmt.Sprint(c.Learner.DemoMix), "max tier": c.Learner.MaxTier, "executors": fmt.Sprint(c.Actor.Executors),
		"latency profile": c.Webenv.LatencyProfile, "topic prefix": c.TopicPrefix, "duration": c.Run.Duration.String(),
		"suite": c.Suite, "features version": fmt.Sprint(policy.FeaturesVersion), "ablations": cmp.Or(c.Ablate, "none"),
	}
	p := d.catalog.Prefix
	return reporter.New(d.kafka, d.catalog,
		reporter.WithLogger(d.log),
		reporter.WithInterval(c.Run.ReportEvery),
		reporter.WithRunDir(c.RunDir),
		reporter.WithPolicyName(c.Actor.PolicyName),
		reporter.WithLagGroups(p+"joiner", p+"learner", p+"recorder"),
		reporter.WithSettings(settings),
	)
}

// frozenCacheBytes is -lm-frozen-cache-mb as LMConfig.FrozenCache: 0 (off)
// as below 0.
func frozenCacheBytes(mb int) int64 {
	if mb <= 0 {
		return -1
	}
	return int64(mb) << 20
}
