package bench

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/loadtest/recorderload"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

const benchRecorderUsage = `Usage: asyncwebrl bench recorder [--events N] [--batch N] [--min-ratio R] [--keep] [flags]
  Produces N synthetic events (mostly actions, rewards and telemetry, some
  observations with tiny frames, 0.01% undecodable) to throwaway topics, then
  measures on the same records a bare clickhouse-go batch insert (decoded
  beforehand, INSERTs timed) and the recorder (consume, decode, insert,
  commit), prints both rows/s side by side with their ratio, and checks that
  both stored exactly the same distinct rows.
  --events N      events to produce (default 200000)
  --batch N       recorder batch / bare chunk size in records (default 50000)
  --min-ratio R   exit 1 when recorder/bare is below R (default 0: report only)
  --keep          keep the topics and the two databases for inspection
Flags: -brokers, -topic-partitions, the Kafka security flags and the -clickhouse-* flags.
`

func runBenchRecorder(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	_, err := benchRecorder(ctx, args, stdout, stderr)
	return err
}

// benchRecorder is bench recorder, returning its result (nil for -help).
func benchRecorder(ctx context.Context, args []string, stdout, stderr io.Writer) (*recorderload.BenchResult, error) {
	if cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, benchRecorderUsage)
		return nil, nil
	}
	vals, rest, err := cmdkit.SubFlags(args, []string{"events", "batch", "min-ratio"}, []string{"keep"})
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	events, batch, minRatio := 200000, 50000, 0.0
	for name, dst := range map[string]*int{"events": &events, "batch": &batch} {
		if v, ok := vals[name]; ok {
			if *dst, err = strconv.Atoi(v); err != nil || *dst < 1 {
				return nil, cmdkit.Usage(fmt.Errorf("invalid --%s %q: want a positive integer", name, v))
			}
		}
	}
	if v, ok := vals["min-ratio"]; ok {
		if minRatio, err = strconv.ParseFloat(v, 64); err != nil || minRatio < 0 {
			return nil, cmdkit.Usage(fmt.Errorf("invalid --min-ratio %q: want a non-negative number", v))
		}
	}
	keep := vals["keep"] == "true"
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return nil, err
	}
	if cfg.Embedded() {
		return nil, cmdkit.Usage(fmt.Errorf("bench recorder needs a real broker (-brokers=embedded has no ClickHouse next to it)"))
	}
	log := cmdkit.NewLogger(cfg, stderr)
	f := kafka.NewFactory(cfg, cfg.Brokers, nil)
	if err := f.Ping(ctx, 10*time.Second); err != nil {
		return nil, err
	}
	newClient := func(o ...kgo.Opt) (*kgo.Client, error) { return f.NewClient("bench-recorder", o...) }
	cl, err := newClient()
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	catalog := cmdkit.Catalog(cfg, "bench-recorder-"+cmdkit.RandomID()+".")
	if err := recorderload.CreateTopics(ctx, cl, catalog); err != nil {
		return nil, err
	}
	if !keep {
		defer func() {
			if err := recorderload.DeleteTopics(context.Background(), cl, catalog); err != nil {
				log.Warn("unable to delete the benchmark topics", "prefix", catalog.Prefix, "err", err)
			}
		}()
	}
	gen := recorderload.NewGenerator(events, uint64(time.Now().UnixNano()), time.Now().Add(-10*time.Minute), 10*time.Minute)
	want := gen.Expected()
	fmt.Fprintf(stdout, "bench recorder: producing %d events to %s* on %d partitions of %s\n",
		events, catalog.Prefix, cfg.TopicPartitions, strings.Join(cfg.Brokers, ","))
	t0 := time.Now()
	if err := recorderload.Produce(ctx, cl, catalog, gen); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "produced in %s; inserting into ClickHouse %s (batch %d)\n", time.Since(t0).Round(time.Millisecond), cfg.ClickHouse.Addr, batch)
	res, err := recorderload.Bench(ctx, recorderload.BenchConfig{
		Catalog: catalog, ClickHouse: cmdkit.ClickHouse(cfg), NewClient: newClient, BatchRecords: batch, Keep: keep, Log: log,
	})
	if err != nil {
		return nil, err
	}
	printBenchRecorder(stdout, res, want, minRatio)
	for table, n := range want {
		if res.Tables[table] != uint64(n) {
			return res, fmt.Errorf("table %s holds %d distinct rows, want %d", table, res.Tables[table], n)
		}
	}
	if keep {
		fmt.Fprintf(stdout, "kept: topics %s*, databases %s and %s\n", catalog.Prefix, res.RecorderDB, res.BareDB)
	}
	if res.Ratio < minRatio {
		return res, fmt.Errorf("recorder/bare ratio %.2f is below --min-ratio %.2f", res.Ratio, minRatio)
	}
	return res, nil
}

func printBenchRecorder(w io.Writer, res *recorderload.BenchResult, want map[string]int, minRatio float64) {
	fmt.Fprintf(w, "  %-44s %10.0f rows/s  %s\n", "recorder (consume, decode, insert, commit)", res.RecorderRate, res.Recorder.Round(time.Millisecond))
	fmt.Fprintf(w, "  %-44s %10.0f rows/s  %s\n", "bare clickhouse-go batch insert (same rows)", res.BareRate, res.Bare.Round(time.Millisecond))
	fmt.Fprintf(w, "ratio recorder/bare: %.2f (min %.2f)\n", res.Ratio, minRatio)
	tables := make([]string, 0, len(want))
	for t := range want {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	var parts []string
	total := uint64(0)
	for _, t := range tables {
		parts = append(parts, fmt.Sprintf("%s %d", t, res.Tables[t]))
		total += res.Tables[t]
	}
	fmt.Fprintf(w, "rows (distinct, both sides): %d = %s\n", total, strings.Join(parts, ", "))
}
