package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/bench"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/drill"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/replaycmd"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
)

// Version is set at build time with -ldflags "-X ...cli.Version=...".
var Version = "dev"

// Exit codes.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// Main runs the binary with args (without the program name) and returns the
// exit code. Panics below are turned into one error line by the recover in
// run, so no stack trace reaches a user.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// Ctrl-C or SIGTERM ends a command's context, so benchmarks and
	// evaluations stop their pipelines and browsers instead of leaving
	// them to the kernel (the targets' own shutdown is in runTargets).
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := dispatch(ctx, args, stdout, stderr)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	}
	fmt.Fprintf(stderr, "asyncwebrl: %s\n", oneLine(err.Error()))
	var ue cmdkit.UsageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitRuntime
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v (please report it)", r)
		}
	}()
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "topics":
			return runTopics(ctx, args[1:], stdout, stderr)
		case "webenv":
			return runWebenv(ctx, args[1:], stdout, stderr)
		case "bench":
			return bench.Run(ctx, args[1:], stdout, stderr, buildTargets)
		case "query":
			return runQuery(ctx, args[1:], stdout, stderr)
		case "audit":
			return runAudit(ctx, args[1:], stdout, stderr)
		case "replay":
			return replaycmd.Run(ctx, args[1:], stdout, stderr)
		case "health":
			return runHealth(ctx, args[1:], stdout, stderr)
		case "policy":
			return runPolicy(ctx, args[1:], stdout, stderr)
		case "drill":
			return drill.Run(ctx, args[1:], stdout, stderr)
		case "soak":
			return bench.Run(ctx, append([]string{"soak"}, args[1:]...), stdout, stderr, buildTargets)
		case "version":
			fmt.Fprintln(stdout, "asyncwebrl", Version)
			return nil
		case "help":
			return usage(stdout)
		default:
			return cmdkit.Usage(fmt.Errorf("unknown command %q (want one of %s, or flags to run targets; see -help)", args[0], strings.Join(config.Subcommands, ", ")))
		}
	}
	cfg, err := cmdkit.Parse(args, stdout)
	if err != nil {
		return err
	}
	return runTargets(ctx, cfg, stderr)
}

func usage(w io.Writer) error {
	fmt.Fprintf(w, `asyncwebrl: asynchronous RL for visual web agents, on Kafka.

Usage:
  asyncwebrl [flags]                      run targets (-target=all by default)
  asyncwebrl topics apply|check|list      create, check or list the topic catalog
  asyncwebrl webenv families [--suite S]  list a suite's task families (builtin, miniwob, all) with tiers
  asyncwebrl bench joiner [--events N]    joiner vs consume-only throughput on the broker
  asyncwebrl bench recorder [--events N]  recorder vs bare clickhouse-go insert rows/s
  asyncwebrl bench rollout [--profile P]  actor steps/s, async vs the lock-step sync baseline
  asyncwebrl query [NAME] [--since 1h]    list or run a saved ClickHouse query (table, csv, json)
  asyncwebrl audit                        every recorded topic against ClickHouse: committed, recorded, aborted
  asyncwebrl bench train|report           time to skill async vs sync RL; every bench in one document with plots
  asyncwebrl drill [--schedule S]         kill -9 a broker, a joiner and a recorder under synthetic load on a
                                          three-broker cluster; verdict: lost, duplicated, recovery times
  asyncwebrl drill matrix [--repeat N]    several drill schedules, each repeated; one verdict line per run
  asyncwebrl soak [--duration 2h]         make run's job for hours, each target sampled every minute (memory,
                                          threads, open files, goroutines, Chromium processes, ClickHouse parts);
                                          fails on growth past its bound
  asyncwebrl health [--url U]             exit 0 when a running asyncwebrl's /healthz answers 200 (container healthchecks)
  asyncwebrl policy features --out F.npz  a recorded observation's policy inputs as NumPy arrays (for Python's onnxruntime)
  asyncwebrl version

Run "asyncwebrl -help" for the flags; every flag has an ASYNCWEBRL_* variable.
`)
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
