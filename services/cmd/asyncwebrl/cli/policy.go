package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/policyaudit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/weightstopic"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

const policyUsage = `Usage: asyncwebrl policy features --out FILE.npz [--episode ID] [--step N] [--count N]
                                [--policy NAME] [--outputs] [flags]
  Exports the policy's inputs for recorded observations, so that the policy
  can be run outside Go (analytics/python/policy_check.py runs it in
  Python's onnxruntime). Reads the obs topic of -topic-prefix from its start,
  read committed, takes the first N observations (of episode ID, at step S,
  when given), featurizes them as the actors do with the architecture of the
  policy's newest version on the weights topic (the initial architecture when
  none is published), and writes FILE.npz: one array per input of the ONNX
  graph, named as the input, batch dimension first (float32 or int64), and
  policy_version (int64 [1]: the version whose architecture was used).
  Prints each observation's event id, episode and step.
  --out FILE      where to write (required)
  --episode ID    only this episode's observations
  --step N        only observations at step N
  --count N       observations in the batch (default 1)
  --policy NAME   the policy (default -policy-name, "default")
  --outputs       also run that version in the actors' ONNX Runtime session
                  and store its outputs as go_type_logits, go_elem_logits,
                  go_cand_logits and go_value (policy_check.py compares them)
Flags: -brokers, -topic-prefix, the Kafka security flags.

       asyncwebrl policy audit [--suite S] [--seeds N] [--families L] [--miniwob-dir D] [--strict]
  Replays the scripted solutions in Chromium and lists, per task, the steps
  the policy's heads cannot express (asyncwebrl policy audit --help).
`

func runPolicy(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "audit" {
		return policyaudit.Run(ctx, args[1:], stdout)
	}
	if len(args) == 0 || cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, policyUsage)
		if len(args) == 0 {
			return cmdkit.Usage(errors.New("policy needs a command: features or audit"))
		}
		return nil
	}
	if args[0] != "features" {
		return cmdkit.Usage(fmt.Errorf("unknown policy command %q (want features or audit)", args[0]))
	}
	vals, rest, err := cmdkit.SubFlags(args[1:], []string{"out", "episode", "step", "count", "policy"}, []string{"outputs", "help", "h"})
	if err != nil {
		return cmdkit.Usage(err)
	}
	if vals["help"] != "" || vals["h"] != "" {
		fmt.Fprint(stdout, policyUsage)
		return nil
	}
	out := vals["out"]
	if out == "" {
		return cmdkit.Usage(errors.New("policy features needs --out FILE.npz"))
	}
	count, step := 1, -1
	if v := vals["count"]; v != "" {
		if count, err = strconv.Atoi(v); err != nil || count < 1 {
			return cmdkit.Usage(fmt.Errorf("invalid --count %q: want a positive number", v))
		}
	}
	if v := vals["step"]; v != "" {
		if step, err = strconv.Atoi(v); err != nil || step < 0 {
			return cmdkit.Usage(fmt.Errorf("invalid --step %q: want a non-negative number", v))
		}
	}
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return err
	}
	name := cmp.Or(vals["policy"], cfg.Actor.PolicyName, "default")
	log := cmdkit.NewLogger(cfg, stderr)
	f := kafka.NewFactory(cfg, cfg.Brokers, log)
	if err := f.Ping(ctx, 10*time.Second); err != nil {
		return err
	}
	cat := cmdkit.Catalog(cfg, cfg.TopicPrefix)
	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) { return f.NewClient("policy-features", opts...) }

	w, err := weightstopic.Latest(ctx, newClient, cat.Name(topics.Weights), name, log, nil)
	if err != nil {
		return err
	}
	onnx, version := w.GetOnnx(), w.GetVersion()
	if w == nil {
		log.Warn("no published version of the policy; using the initial architecture", "policy", name, "topic", cat.Name(topics.Weights))
		arch := cfg.FreshArchitecture()
		if onnx, err = policy.InitialONNX(arch); err != nil {
			return err
		}
	}
	arch, err := policy.ReadArchitecture(onnx)
	if err != nil {
		return err
	}

	obs, err := recordedObservations(ctx, newClient, cat.Name(topics.Obs), vals["episode"], step, count, log)
	if err != nil {
		return err
	}
	feats := make([]*policy.Features, len(obs))
	for i, o := range obs {
		if feats[i], err = arch.Featurize(o); err != nil {
			return fmt.Errorf("unable to featurize observation %s: %w", o.GetEnvelope().GetEventId(), err)
		}
		fmt.Fprintf(stdout, "observation %d: %s (episode %s, step %d)\n", i, o.GetEnvelope().GetEventId(), o.GetEnvelope().GetEpisodeId(), o.GetEnvelope().GetStep())
	}
	batch, err := arch.Stack(feats)
	if err != nil {
		return err
	}
	arrays := append(slices.Clone(batch.Inputs), policy.Input{Name: "policy_version", Shape: []int64{1}, I64: []int64{int64(version)}})
	if vals["outputs"] == "true" {
		goOut, err := runOnce(onnx, batch)
		if err != nil {
			return err
		}
		arrays = append(arrays, goOut...)
	}
	var buf bytes.Buffer
	if err := policy.WriteNPZ(&buf, arrays); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("unable to write %s: %w", out, err)
	}
	fmt.Fprintf(stdout, "wrote %d observations featurized for policy %q version %d to %s\n", len(obs), name, version, out)
	return nil
}

// errEnough ends the read of the obs topic once the batch is full.
var errEnough = errors.New("enough observations")

// recordedObservations reads topic from its start, read committed, and
// returns the first count observations of episode (any when empty) at step
// (any when negative).
func recordedObservations(ctx context.Context, newClient joiner.ClientFunc, topic, episode string, step, count int, log *slog.Logger) ([]*eventspb.Observation, error) {
	var obs []*eventspb.Observation
	err := joiner.ReadCommitted(ctx, newClient, topic, nil, func(r *kgo.Record) error {
		if episode != "" && string(r.Key) != episode {
			return nil // keyed by episode id: skip without decoding the frame
		}
		o, err := eventspb.DecodeObservation(r.Value)
		if err != nil {
			log.Warn("skipping an undecodable observation", "partition", r.Partition, "offset", r.Offset, "err", err)
			return nil
		}
		if (episode != "" && o.GetEnvelope().GetEpisodeId() != episode) || (step >= 0 && int(o.GetEnvelope().GetStep()) != step) {
			return nil
		}
		obs = append(obs, o)
		if len(obs) == count {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, err
	}
	if len(obs) == 0 {
		return nil, fmt.Errorf("unable to export features: no observation on %s matches (episode %q, step %d)", topic, episode, step)
	}
	return obs, nil
}

// runOnce runs the model once on batch in a Session, the actors' ONNX
// Runtime path (the library found as theirs: $ASYNCWEBRL_ONNXRUNTIME_LIB or
// .run/lib), and returns its outputs as go_* arrays.
func runOnce(onnx []byte, batch *policy.Batch) ([]policy.Input, error) {
	sess, err := policy.NewSession(onnx, policy.WithIntraOpThreads(1))
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	out, err := sess.Run(batch)
	if err != nil {
		return nil, err
	}
	arch := sess.Arch()
	B := int64(batch.Size)
	specs := arch.OutputSpecs()
	data := [][]float32{out.TypeLogits, out.ElemLogits, out.CandLogits, out.Value, out.PointLogits, out.PointOffsets}
	res := make([]policy.Input, len(specs))
	for i, s := range specs {
		res[i] = policy.Input{Name: "go_" + s.Name, Shape: append([]int64{B}, s.Shape...), F32: data[i]}
	}
	return res, nil
}
