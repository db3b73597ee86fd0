package cli

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// newWebenv builds the webenv target: the task server on -webenv-addr,
// serving the configured split (default all), latency profile and suite
// (-suite=miniwob or all mounts -miniwob-dir).
func newWebenv(d deps) (app.Service, error) {
	profile, err := webenv.ParseProfile(d.cfg.Webenv.LatencyProfile)
	if err != nil {
		return nil, cmdkit.Usage(fmt.Errorf("invalid -latency-profile: %w", err))
	}
	split, err := catalog.ParseSplit(d.cfg.Webenv.Split)
	if err != nil {
		return nil, cmdkit.Usage(fmt.Errorf("invalid -webenv-split: %w", err))
	}
	suite, err := catalog.ParseSuite(d.cfg.Suite)
	if err != nil {
		return nil, cmdkit.Usage(fmt.Errorf("invalid -suite: %w", err))
	}
	opts := []webenv.Option{
		webenv.WithAddr(d.cfg.WebenvAddr),
		webenv.WithSuite(suite),
		webenv.WithMiniWoBDir(d.cfg.Webenv.MiniWoBDir),
		webenv.WithSplit(split),
		webenv.WithProfile(profile),
		webenv.WithLogger(d.log.With("service", "webenv")),
	}
	if d.cfg.Seed > 0 {
		opts = append(opts, webenv.WithLatencySeed(d.cfg.Seed))
	}
	return webenv.New(opts...)
}

const webenvUsage = `Usage: asyncwebrl webenv families [--suite builtin|miniwob|all] [-format text|json]
  families   list every task family of a suite with its tier; the built-in
             ones with their sites and train/test split, the MiniWoB++ ones
             with the steps of a minimal solution, the time limit, whether
             the action space can express the task and, if not, why
  --suite S  the suite (default -suite, env ASYNCWEBRL_SUITE, else builtin)
  -format F  text (default) or json
`

func runWebenv(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, webenvUsage)
		return nil
	}
	if args[0] != "families" {
		return cmdkit.Usage(fmt.Errorf("unknown webenv command %q (want families)", args[0]))
	}
	vals, rest, err := cmdkit.SubFlags(args[1:], []string{"format"}, []string{"help", "h"})
	if err != nil {
		return cmdkit.Usage(err)
	}
	if vals["help"] != "" || vals["h"] != "" {
		fmt.Fprint(stdout, webenvUsage)
		return nil
	}
	format := cmp.Or(vals["format"], "text")
	if format != "text" && format != "json" {
		return cmdkit.Usage(fmt.Errorf("invalid -format %q: want text or json", format))
	}
	// -suite is the binary's flag (and ASYNCWEBRL_SUITE): the same parse
	// as a run, so that a listing shows what a run would serve.
	cfg, err := cmdkit.Parse(rest, stderr)
	if err != nil {
		return err
	}
	suite, err := catalog.ParseSuite(cfg.Suite)
	if err != nil {
		return cmdkit.Usage(fmt.Errorf("invalid -suite: %w", err))
	}
	return catalog.PrintSuite(stdout, format, suite)
}
