package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// newWebenv builds the webenv target: the task server on -webenv-addr,
// serving the configured split (default all) and latency profile.
func newWebenv(d deps) (app.Service, error) {
	profile, err := webenv.ParseProfile(d.cfg.Webenv.LatencyProfile)
	if err != nil {
		return nil, usageError{fmt.Errorf("invalid -latency-profile: %w", err)}
	}
	split, err := webenv.ParseSplit(d.cfg.Webenv.Split)
	if err != nil {
		return nil, usageError{fmt.Errorf("invalid -webenv-split: %w", err)}
	}
	return webenv.New(
		webenv.WithAddr(d.cfg.WebenvAddr),
		webenv.WithSplit(split),
		webenv.WithProfile(profile),
		webenv.WithLogger(d.log.With("service", "webenv")),
	)
}

func runWebenv(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-help" || args[0] == "--help" || args[0] == "-h" {
		fmt.Fprint(stdout, `Usage: asyncwebrl webenv families [-format text|json]
  families   list every task family with its tier, its sites and the train/test split
`)
		return nil
	}
	if args[0] != "families" {
		return usageError{fmt.Errorf("unknown webenv command %q (want families)", args[0])}
	}
	format := "text"
	switch rest := args[1:]; {
	case len(rest) == 0:
	case len(rest) == 2 && (rest[0] == "-format" || rest[0] == "--format"):
		format = rest[1]
	case len(rest) == 1 && (rest[0] == "-format=json" || rest[0] == "--format=json"):
		format = "json"
	case len(rest) == 1 && (rest[0] == "-format=text" || rest[0] == "--format=text"):
	default:
		return usageError{fmt.Errorf("unexpected arguments %v (want: families [-format text|json])", rest)}
	}
	if format != "text" && format != "json" {
		return usageError{fmt.Errorf("invalid -format %q: want text or json", format)}
	}
	return webenv.PrintFamilies(stdout, format)
}
