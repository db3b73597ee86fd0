package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

const benchUsage = `Usage: asyncwebrl bench joiner [--events N] [--repeat K] [--min-ratio R] [--frame-bytes B] [flags]
  Produces N synthetic records (10% reordered, 5% duplicated, 1% malformed)
  to throwaway topics on the configured broker, then measures a plain
  consume-only group consumer and the exactly-once joiner on them, prints
  both side by side with their ratio and verifies the joiner's output.
  Then it writes the joiner's committed output again, alone, in as many
  transactions (the write floor: nothing consumed or joined), whose rate
  over consume-only is the ceiling of the ratio for any joiner writing
  that output on this broker and machine. Beside the rates it prints the
  output's size: bytes per transition (the transitions topic's record
  values over its transitions) and output bytes per input byte (every
  output topic, changelog included, over obs, actions and rewards).
  --events N       records to produce (default 200000)
  --repeat K       runs, each on fresh topics (default 1); with K > 1 the medians
                   follow (one run on a shared 2-core machine is noisy)
  --min-ratio R    exit 1 when joiner/consume-only (the median over the runs) is
                   below R (default 0: report only)
  --frame-bytes B  size of each observation's frame (default 3000, the median
                   of the actor's wire-frame JPEGs: 128-pixel longer side,
                   quality 80)
Flags: -brokers, -topic-partitions, -topic-replication, the Kafka security flags and
the ASYNCWEBRL_JOINER_* variables (see asyncwebrl -help). When the default local
broker does not answer, infra/kafka.sh start is run.
`

func runBenchJoiner(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	_, err := benchJoiner(ctx, args, stdout, stderr)
	return err
}

// joinerSummary is what bench joiner measured: medians over its runs.
type joinerSummary struct {
	runs                               int
	consume, join, ratio, ceiling      float64
	bytesPerTransition, outputPerInput float64
}

// benchJoiner is bench joiner, returning its medians.
func benchJoiner(ctx context.Context, args []string, stdout, stderr io.Writer) (joinerSummary, error) {
	var none joinerSummary
	if cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, benchUsage)
		return none, nil
	}
	bf, rest, err := benchFlags(args)
	if err != nil {
		return none, cmdkit.Usage(err)
	}
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return none, err
	}
	opts, err := cmdkit.JoinerOptions(os.Getenv)
	if err != nil {
		return none, cmdkit.Usage(err)
	}
	log := cmdkit.NewLogger(cfg, stderr)
	f, closeKafka, err := kafka.Connect(cfg, nil)
	if err != nil {
		return none, err
	}
	defer closeKafka()
	if err := f.Ping(ctx, 5*time.Second); err != nil {
		if !isDefaultLocalBroker(cfg) {
			return none, err
		}
		fmt.Fprintln(stderr, "no broker answers at", strings.Join(cfg.Brokers, ","), "- starting it with infra/kafka.sh start")
		if serr := startLocalKafka(ctx, stderr); serr != nil {
			return none, errors.Join(err, serr)
		}
		if err := f.Ping(ctx, 30*time.Second); err != nil {
			return none, err
		}
	}
	load := loadtest.DefaultConfig(bf.events)
	load.FrameBytes = bf.frameBytes
	var consume, join, ratios, ceilings, perTransition, perInput []float64
	for k := range bf.repeat {
		res, err := loadtest.BenchJoiner(ctx, loadtest.BenchConfig{
			NewClient: func(o ...kgo.Opt) (*kgo.Client, error) { return f.NewClient("bench", o...) },
			NewJoiner: func(cat *topics.Catalog) (loadtest.JoinerMember, error) {
				return joiner.New(cfg, f, cat, append(opts, joiner.WithInstanceID(cfg.InstanceID+"-bench"), joiner.WithLogger(log.With("service", "joiner")))...)
			},
			Log:         log,
			Load:        load,
			Partitions:  int32(cfg.TopicPartitions),
			Replication: int16(cfg.TopicReplication),
		})
		if err != nil {
			return none, err
		}
		fmt.Fprintf(stdout, "bench joiner: %d records (%d%% reordered, %d%% duplicated, %d%% malformed, %d-byte frames) on %d partitions of %s",
			res.Records, int(load.Reorder*100), int(load.Duplicate*100), int(load.Malformed*100), load.FrameBytes, res.Partitions, strings.Join(cfg.Brokers, ","))
		if bf.repeat > 1 {
			fmt.Fprintf(stdout, ", run %d of %d", k+1, bf.repeat)
		}
		fmt.Fprintln(stdout)
		fmt.Fprint(stdout, res)
		fmt.Fprint(stdout, res.Sizes())
		fmt.Fprintf(stdout, "ratio joiner/consume-only: %.2f (min %.2f); ceiling for this output (write floor/consume-only): %.2f\n", res.Ratio(), bf.minRatio, res.Ceiling())
		fmt.Fprintf(stdout, "verified: %s\n", res.Verified)
		if !res.Verified.OK() {
			return none, errors.New("the joiner's output is wrong (see verified above)")
		}
		consume, join, ratios = append(consume, res.ConsumeOnlyRate()), append(join, res.JoinerRate()), append(ratios, res.Ratio())
		ceilings = append(ceilings, res.Ceiling())
		perTransition, perInput = append(perTransition, res.BytesPerTransition()), append(perInput, res.OutputPerInputByte())
	}
	ratio := median(ratios)
	if bf.repeat > 1 {
		fmt.Fprintf(stdout, "\nmedians over %d runs: consume-only %.0f records/s, joiner (EOS) %.0f records/s, ratio %.2f (min %.2f), ceiling %.2f\n",
			bf.repeat, median(consume), median(join), ratio, bf.minRatio, median(ceilings))
		fmt.Fprintf(stdout, "medians over %d runs: bytes per transition %.0f, output bytes per input byte %.3f\n",
			bf.repeat, median(perTransition), median(perInput))
	}
	sum := joinerSummary{runs: bf.repeat, consume: median(consume), join: median(join), ratio: ratio, ceiling: median(ceilings),
		bytesPerTransition: median(perTransition), outputPerInput: median(perInput)}
	if ratio < bf.minRatio {
		return sum, errRatio{"joiner/consume-only", ratio, bf.minRatio}
	}
	return sum, nil
}

// joinerBenchFlags are bench joiner's own flags.
type joinerBenchFlags struct {
	events, frameBytes, repeat int
	minRatio                   float64
}

// benchFlags takes the benchmark's own flags out of args; the rest are the
// binary's flags.
func benchFlags(args []string) (f joinerBenchFlags, rest []string, err error) {
	f = joinerBenchFlags{events: 200000, frameBytes: loadtest.RealFrameBytes, repeat: 1}
	own := []string{"events", "min-ratio", "frame-bytes", "repeat"}
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !slices.Contains(own, name) || !strings.HasPrefix(args[i], "-") {
			rest = append(rest, args[i])
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return f, nil, fmt.Errorf("flag --%s needs a value", name)
			}
			i++
			val = args[i]
		}
		switch name {
		case "events":
			f.events, err = strconv.Atoi(val)
			if err != nil || f.events < 1 {
				return f, nil, fmt.Errorf("invalid --events %q: want a positive integer", val)
			}
		case "repeat":
			f.repeat, err = strconv.Atoi(val)
			if err != nil || f.repeat < 1 {
				return f, nil, fmt.Errorf("invalid --repeat %q: want a positive integer", val)
			}
		case "frame-bytes":
			f.frameBytes, err = strconv.Atoi(val)
			if err != nil || f.frameBytes < 0 || f.frameBytes > 1<<20 {
				return f, nil, fmt.Errorf("invalid --frame-bytes %q: want 0..1048576", val)
			}
		case "min-ratio":
			f.minRatio, err = strconv.ParseFloat(val, 64)
			if err != nil || f.minRatio < 0 {
				return f, nil, fmt.Errorf("invalid --min-ratio %q: want a non-negative number", val)
			}
		}
	}
	return f, rest, nil
}

func isDefaultLocalBroker(cfg *config.Config) bool {
	return len(cfg.Brokers) == 1 && cfg.Brokers[0] == "127.0.0.1:19092"
}

// startLocalKafka runs infra/kafka.sh start from the repository the binary
// is run in (found by walking up from the working directory).
func startLocalKafka(ctx context.Context, stderr io.Writer) error {
	dir, err := os.Getwd()
	if err != nil {
		return err
	}
	for {
		script := filepath.Join(dir, "infra", "kafka.sh")
		if _, err := os.Stat(script); err == nil {
			cmd := exec.CommandContext(ctx, "bash", script, "start")
			cmd.Stdout, cmd.Stderr = stderr, stderr
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("unable to start Kafka with %s: %w", script, err)
			}
			return nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return errors.New("unable to start Kafka: infra/kafka.sh not found above the working directory (start a broker or pass -brokers)")
		}
		dir = parent
	}
}
