package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/app"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Pipeline builds the named targets on cfg as the assembly builds them,
// with one metrics registry of their own: package cli passes its
// constructors (bench train runs webenv, actor, joiner and learner in this
// process), which this package cannot import.
type Pipeline func(cfg *config.Config, names []string, log *slog.Logger, f *kafka.Factory, cat *topics.Catalog) ([]app.Service, error)

// quiet takes the logs of what a benchmark runs (the pipeline, webenv, the
// Kafka client), which its report leaves out.
var quiet = slog.New(slog.DiscardHandler)

// errRatio is returned when a benchmark's ratio (what: "joiner/consume-only",
// "async/sync steps/s") is below --min-ratio.
type errRatio struct {
	what       string
	ratio, min float64
}

func (e errRatio) Error() string {
	return fmt.Sprintf("%s ratio %.2f is below --min-ratio %.2f", e.what, e.ratio, e.min)
}

// Run is the bench command (args after "bench"): report, train, rollout,
// pipeline, joiner, recorder or soak; build is what bench train (and report's train
// section) builds its pipeline with.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, build Pipeline) error {
	if len(args) == 0 || cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, "Usage: asyncwebrl bench report|train|rollout|pipeline|joiner|recorder|soak [flags] (asyncwebrl bench <name> -help for each)\n\n"+benchUsage)
		return nil
	}
	switch args[0] {
	case "train":
		return runBenchTrain(ctx, args[1:], stdout, stderr, build)
	case "report":
		return runBenchReport(ctx, args[1:], stdout, stderr, build)
	case "rollout":
		return runBenchRollout(ctx, args[1:], stdout, stderr)
	case "pipeline":
		return runBenchPipeline(ctx, args[1:], stdout, stderr)
	case "recorder":
		return runBenchRecorder(ctx, args[1:], stdout, stderr)
	case "joiner":
		return runBenchJoiner(ctx, args[1:], stdout, stderr)
	case "soak":
		return runSoak(ctx, args[1:], stdout, stderr)
	}
	return cmdkit.Usage(fmt.Errorf("unknown benchmark %q (want report, train, rollout, pipeline, joiner, recorder or soak)", args[0]))
}

// deleteTopics deletes a benchmark's topics (its prefix is the bench's
// own); errors are ignored, as at the end of a run nothing can be done.
func deleteTopics(f *kafka.Factory, cat *topics.Catalog) {
	cl, err := f.NewClient("bench-topics")
	if err != nil {
		return
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = kadm.NewClient(cl).DeleteTopics(ctx, cat.Names()...)
}
