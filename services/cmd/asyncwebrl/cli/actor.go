package cli

import (
	"cmp"
	"fmt"
	"path/filepath"

	"github.com/asyncwebrl/asyncwebrl/services/actor"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/backend"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// newActor builds the actor target from the -executors, -browsers,
// -actor-mode, -loop, -allowed-origins, -frame-store, -shaping, -policy-name and
// -suite (the local task generator's tasks) flags.
func newActor(d deps) (app.Service, error) {
	a := d.cfg.Actor
	bflags, err := env.ParseBrowserFlags(a.BrowserFlags)
	if err != nil {
		return nil, cmdkit.Usage(fmt.Errorf("invalid -browser-flags: %w", err))
	}
	mode := actor.Mode(a.Mode) // config.Actor checked it
	shaping, err := webenv.ParseShaping(a.Shaping)
	if err != nil {
		return nil, cmdkit.Usage(fmt.Errorf("invalid -shaping: %w", err))
	}
	suite, err := catalog.ParseSuite(d.cfg.Suite)
	if err != nil {
		return nil, cmdkit.Usage(fmt.Errorf("invalid -suite: %w", err))
	}
	// The random-init policy acts in the run's action space, as the
	// learner's first version will (config resolved -action-set).
	initial, err := policy.InitialONNXSeeded(d.cfg.FreshArchitecture(), cmp.Or(d.cfg.Seed, policy.InitSeed))
	if err != nil {
		return nil, err
	}
	profile, err := webenv.ParseProfile(d.cfg.Webenv.LatencyProfile)
	if err != nil {
		return nil, cmdkit.Usage(fmt.Errorf("invalid -latency-profile: %w", err))
	}
	opts := []actor.Option{
		actor.WithInitialONNX(initial),
		// The actors' MiniWoB++ pages meet the profile's delays as the
		// built-in pages do (one request per action).
		actor.WithRequestPerAction(profile.Delays()),
		actor.WithMiniWoBTimeLimit(a.MiniWoBTimeLimit),
		actor.WithShaping(shaping),
		actor.WithSuite(suite),
		actor.WithBrowserNice(a.BrowserNice),
		actor.WithCrashRetries(a.CrashRetries),
		actor.WithBrowserOptions(env.WithExecPath(a.BrowserPath), env.WithSandbox(a.BrowserSandbox)),
		actor.WithBrowserOptions(bflags...),
		actor.WithExecutors(a.Executors),
		actor.WithBrowsers(a.Browsers),
		actor.WithMode(mode),
		actor.WithOnPolicy(d.cfg.Loop == "sync"),
		actor.WithWebenvURL(d.cfg.WebenvURL),
		actor.WithPolicyName(a.PolicyName),
		actor.WithInstanceID(d.cfg.InstanceID),
		actor.WithLogger(d.log),
		actor.WithMetrics(d.metrics),
	}
	if d.cfg.Seed > 0 {
		opts = append(opts, actor.WithSampleSeed(d.cfg.Seed))
	}
	bopts, err := backend.Option(d.cfg, d.log)
	if err != nil {
		return nil, err
	}
	opts = append(opts, bopts...)
	fams, err := generatorFamilies(d.cfg.Learner.Families, suite)
	if err != nil {
		return nil, err
	}
	if len(fams) > 0 {
		opts = append(opts, actor.WithFamilies(fams...))
	}
	if len(a.AllowedOrigins) > 0 {
		opts = append(opts, actor.WithAllowedOrigins(a.AllowedOrigins...))
	}
	if a.FrameStore {
		opts = append(opts, actor.WithFrameStore(filepath.Join(d.cfg.RunDir, "frames")))
	}
	return actor.New(d.cfg, d.kafka, d.catalog, opts...)
}

// generatorFamilies resolves -families (the run's trained tasks) to the
// names the actor's local task generator draws from, or nil for none named
// (the generator then draws the suite's). The generator feeds an executor
// that got no task from the tasks topic within its grace (3 s), as at a
// run's start before the curriculum's first assignments: without this, a
// 12-07 lm run on six MiniWoB++ tasks began with an episode each of
// bisect-angle, button-delay and buy-ticket, which it then trained on.
func generatorFamilies(families string, suite catalog.Suite) ([]string, error) {
	names := config.SplitList(families)
	if len(names) == 0 {
		return nil, nil
	}
	fams, err := catalog.SelectFamilies(suite, names)
	if err != nil {
		return nil, cmdkit.Usage(fmt.Errorf("invalid -families: %w", err))
	}
	out := make([]string, len(fams))
	for i, f := range fams {
		out[i] = f.Name
	}
	return out, nil
}
