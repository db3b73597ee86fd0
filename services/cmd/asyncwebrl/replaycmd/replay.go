package replaycmd

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/services/replay"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

const replayUsage = `Usage: asyncwebrl replay join --into TOPIC [--from B] [--to B] [--source kafka|clickhouse]
                               [--late-window D] [--max-staleness K] [--min-stability S] [--raw-reward] [flags]
  Re-runs the joiner's deterministic state machine over the raw history of
  the obs, actions and rewards topics (of -topic-prefix) between two bounds,
  with the settings given, and writes the transitions to TOPIC (created like
  the transitions topic when missing). The same history and settings always
  give the same transitions, byte for byte, with the same event ids.
  --into TOPIC        output topic, full name (required)
  --from B, --to B    start, end, an offset, or an RFC 3339 time (default start, end)
  --source S          kafka (default), or clickhouse: the recorder's event_log
                      archive, for history beyond Kafka's retention
  --late-window D     the join's late window W (default 30s)
  --max-staleness K   dead-letter actions K policy versions behind (default 0: off)
  --min-stability S   a frame is a state only with stability score >= S (default 0)
  --raw-reward        join the raw success reward instead of the shaped one
Flags: -brokers, -topic-prefix, -topic-partitions, the Kafka security flags and
the -clickhouse-* flags (see asyncwebrl -help).

Usage: asyncwebrl replay train --transitions TOPIC [--policy-name NAME] [--live-policy NAME]
                               [--success-only] [--eval-episodes N] [learner flags]
  Trains a fresh policy from a transitions topic (the live one, or one that
  replay join wrote), with no actors running; publishes it on the weights
  topic (of -topic-prefix) under NAME; evaluates it and the newest version of
  the live policy greedily on the held-out test sites of the easy tier, on the
  same task seeds; and writes a report comparing the two to
  <run-dir>/runs/replay-<time>/report.md.
  --transitions TOPIC  full topic name (required)
  --policy-name NAME   the new policy (default replay-<time>)
  --live-policy NAME   the policy to compare with (default -policy-name's default, "default")
  --success-only       train on the steps of successful episodes by cloning
                       (filtered behaviour cloning) instead of -algo
  --eval-episodes N    held-out episodes per easy family and model (default 10)
Learner flags: -algo, -replay, -batch-size, -lr, -replay-ratio; -executors for
the evaluation.

` + replayEvalUsage

// Run is the replay command (args after "replay"): join, train or eval.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, replayUsage)
		if len(args) == 0 {
			return cmdkit.Usage(fmt.Errorf("replay needs a command: join, train or eval"))
		}
		return nil
	}
	switch args[0] {
	case "train":
		return runTrain(ctx, args[1:], stdout, stderr)
	case "eval":
		return runEval(ctx, args[1:], stdout, stderr)
	case "join":
	default:
		return cmdkit.Usage(fmt.Errorf("unknown replay command %q (want join, train or eval)", args[0]))
	}
	vals, rest, err := cmdkit.SubFlags(args[1:], []string{"into", "from", "to", "source", "late-window", "max-staleness", "min-stability"}, []string{"raw-reward", "help", "h"})
	if err != nil {
		return cmdkit.Usage(err)
	}
	if vals["help"] != "" || vals["h"] != "" {
		fmt.Fprint(stdout, replayUsage)
		return nil
	}
	rc, err := parseReplayJoin(vals)
	if err != nil {
		return cmdkit.Usage(err)
	}
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return err
	}
	f := kafka.NewFactory(cfg, cfg.Brokers, nil)
	if err := f.Ping(ctx, 10*time.Second); err != nil {
		return err
	}
	cat := cmdkit.Catalog(cfg, cfg.TopicPrefix)
	var src replay.Source
	switch rc.source {
	case "kafka":
		src = &replay.KafkaSource{NewClient: func(opts ...kgo.Opt) (*kgo.Client, error) { return f.NewClient("replay", opts...) },
			Catalog: cat, From: rc.from, To: rc.to}
	case "clickhouse":
		ch := cmdkit.ClickHouse(cfg)
		conn, err := analytics.Open(ctx, ch)
		if err != nil {
			return err
		}
		defer conn.Close()
		db := ch.Database
		if db == "" {
			db = "default"
		}
		src = &replay.ClickHouseSource{Conn: conn, Database: db, Catalog: cat, From: rc.from, To: rc.to}
	}
	out, err := f.NewClient("replay-out", kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchCompression(kgo.ZstdCompression()),
		kgo.ProducerBatchMaxBytes(16<<20))
	if err != nil {
		return err
	}
	defer out.Close()
	if err := createLike(ctx, out, cat, rc.into); err != nil {
		return err
	}
	t0 := time.Now()
	fmt.Fprintf(stdout, "replay join: %s history of %s (%s .. %s) with late window %s, staleness %d, min stability %g, raw reward %v into %s\n",
		rc.source, strings.TrimSuffix(cfg.TopicPrefix, "."), rc.from, rc.to, rc.set.Window, rc.set.MaxStaleness, rc.set.MinStability, rc.set.RawReward, rc.into)
	var produceErr error
	res, err := replay.Join(ctx, src, rc.set, func(_ int32, key, value []byte) error {
		if produceErr != nil {
			return produceErr
		}
		out.Produce(ctx, &kgo.Record{Topic: rc.into, Key: key, Value: value}, func(r *kgo.Record, err error) {
			if err != nil && produceErr == nil {
				produceErr = kafka.NewRecordError(r, err)
			}
		})
		return nil
	})
	if err != nil {
		return err
	}
	if err := out.Flush(ctx); err != nil {
		return fmt.Errorf("unable to write the replayed transitions: %w", err)
	}
	if produceErr != nil {
		return fmt.Errorf("unable to write the replayed transitions: %w", produceErr)
	}
	fmt.Fprintf(stdout, "replayed %d records of %d partitions in %s: %d transitions, %d episodes\n",
		res.Records, res.Partitions, time.Since(t0).Round(time.Millisecond), res.Transitions, res.Episodes)
	for _, k := range slices.Sorted(maps.Keys(res.Dropped)) {
		fmt.Fprintf(stdout, "  dropped %-12s %d\n", k, res.Dropped[k])
	}
	for _, k := range slices.Sorted(maps.Keys(res.DeadLetters)) {
		fmt.Fprintf(stdout, "  dead letter %-30s %d\n", strings.TrimPrefix(k, "REASON_CODE_"), res.DeadLetters[k])
	}
	return nil
}

type replayJoin struct {
	into, source string
	from, to     replay.Bound
	set          joiner.Settings
}

func parseReplayJoin(vals map[string]string) (replayJoin, error) {
	rc := replayJoin{into: vals["into"], source: vals["source"], set: joiner.DefaultSettings()}
	if rc.into == "" {
		return rc, fmt.Errorf("replay join needs --into TOPIC")
	}
	if rc.source == "" {
		rc.source = "kafka"
	}
	if rc.source != "kafka" && rc.source != "clickhouse" {
		return rc, fmt.Errorf("invalid --source %q: want kafka or clickhouse", rc.source)
	}
	var err error
	if rc.from, err = replay.ParseBound(vals["from"]); err != nil {
		return rc, err
	}
	to := vals["to"]
	if to == "" {
		to = "end"
	}
	if rc.to, err = replay.ParseBound(to); err != nil {
		return rc, err
	}
	if v := vals["late-window"]; v != "" {
		if rc.set.Window, err = time.ParseDuration(v); err != nil {
			return rc, fmt.Errorf("invalid --late-window %q: %v", v, err)
		}
	}
	if v := vals["max-staleness"]; v != "" {
		if rc.set.MaxStaleness, err = strconv.ParseUint(v, 10, 64); err != nil {
			return rc, fmt.Errorf("invalid --max-staleness %q: want a number of versions", v)
		}
	}
	if v := vals["min-stability"]; v != "" {
		if rc.set.MinStability, err = strconv.ParseFloat(v, 64); err != nil {
			return rc, fmt.Errorf("invalid --min-stability %q: want 0..1", v)
		}
	}
	if v := vals["raw-reward"]; v != "" {
		if rc.set.RawReward, err = strconv.ParseBool(v); err != nil {
			return rc, fmt.Errorf("invalid --raw-reward %q", v)
		}
	}
	return rc, rc.set.Validate()
}

// createLike creates topic with the transitions topic's settings when it
// does not exist.
func createLike(ctx context.Context, cl *kgo.Client, cat *topics.Catalog, topic string) error {
	cat, err := topics.Resolve(ctx, cl, cat)
	if err != nil {
		return err
	}
	spec, err := cat.Spec(topics.Transitions)
	if err != nil {
		return err
	}
	adm := kadm.NewClient(cl)
	cfgs := map[string]*string{}
	for k, v := range spec.Configs() {
		cfgs[k] = &v
	}
	resp, err := adm.CreateTopic(ctx, spec.Partitions, spec.Replication, cfgs, topic)
	if err != nil && !strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS") {
		return fmt.Errorf("unable to create %s: %w", topic, err)
	}
	if resp.Err != nil && !strings.Contains(resp.Err.Error(), "TOPIC_ALREADY_EXISTS") {
		return fmt.Errorf("unable to create %s: %w", topic, resp.Err)
	}
	return nil
}
