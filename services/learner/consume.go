package learner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// consume turns transitions into samples until ctx ends. A record's offset
// is marked for commit once its fate is decided: in the assembler or the
// replay buffer, dead-lettered, or skipped with a counted reason.
func (s *Service) consume(ctx context.Context) error {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	l := &kafka.Loop{Name: "learner transitions", Poller: s.consumer, Max: 512, Log: s.log,
		Handle: func(ctx context.Context, fs kgo.Fetches) error {
			now := time.Now()
			for _, r := range fs.Records() {
				s.ingest(ctx, r, now)
				s.consumer.MarkCommitRecords(r)
			}
			select {
			case <-tick.C:
				ready, dropped := s.asm.expire(now)
				s.release(ready)
				s.m.skipped.WithLabelValues("episode_incomplete").Add(float64(dropped))
				s.m.pending.Set(float64(s.asm.pending()))
			default:
			}
			return nil
		}}
	return l.Run(ctx)
}

// ingest decodes one transition. What cannot be trained on goes to the dlq
// with its reason; training goes on. The held-out and staleness filters
// run on a light decode (lightTransition: no frames, no elements), so a
// record they drop is never decoded in full; a record the light decode
// cannot vouch for is decoded in full first, which dead-letters it as
// before.
func (s *Service) ingest(ctx context.Context, r *kgo.Record, now time.Time) {
	lt, light := lightTransition(r.Value)
	tr := lt.tr
	if !light {
		var err error
		if tr, err = eventspb.DecodeTransition(r.Value); err != nil {
			s.deadLetter(ctx, r, eventspb.ReasonCode_REASON_CODE_DECODE_ERROR, err.Error())
			return
		}
	}
	s.m.consumed.Inc()
	if heldOutTransition(tr) {
		s.m.skipped.WithLabelValues("held_out").Inc()
		if s.sync != nil && tr.GetDone() {
			// Part of the actors' batch all the same.
			s.sync.ended(tr.GetPolicyVersion(), now)
		}
		return
	}
	if s.o.frozen {
		// Nothing trains on it (a served model's run): read for the
		// group's offsets and the lag, not mapped onto a network that
		// did not act.
		s.m.skipped.WithLabelValues("not_trained").Inc()
		return
	}
	demo := tr.GetAction().GetEnvelope().GetSource() == eventspb.Source_SOURCE_DEMO
	if !demo && s.o.maxLag > 0 && tr.GetPolicyVersion()+s.o.maxLag < s.version.Load() {
		s.m.skipped.WithLabelValues("stale").Inc()
		return
	}
	if light {
		// Kept: its frame and elements now.
		var ok bool
		if tr, ok = lt.full(); !ok {
			var err error
			if tr, err = eventspb.DecodeTransition(r.Value); err != nil {
				s.deadLetter(ctx, r, eventspb.ReasonCode_REASON_CODE_DECODE_ERROR, err.Error())
				return
			}
		}
	}
	if s.lm != nil {
		ls, err := s.lm.sampleOf(tr)
		switch {
		case demo && errors.Is(err, errOutsideLanguage):
			s.m.skipped.WithLabelValues("demo_not_representable").Inc()
			return
		case err != nil:
			s.deadLetter(ctx, r, eventspb.ReasonCode_REASON_CODE_SCHEMA_INVALID, "unable to score the language model's step: "+err.Error())
			return
		}
		s.take(&sample{lm: ls, logpOld: tr.GetLogProbOld(), demo: demo, version: tr.GetPolicyVersion(),
			key: tr.GetFamily() + "/" + tr.GetSite()}, tr, now)
		return
	}
	f, err := s.arch.Featurize(tr.GetObs())
	if err != nil {
		s.deadLetter(ctx, r, eventspb.ReasonCode_REASON_CODE_SCHEMA_INVALID, "unable to featurize the state: "+err.Error())
		return
	}
	c, err := s.arch.ChoiceOf(f, tr.GetAction())
	if err != nil {
		if demo && errors.Is(err, policy.ErrNotRepresentable) {
			// The demonstrator may act in ways the policy's heads cannot
			// express (typing key by key); such steps are skipped.
			s.m.skipped.WithLabelValues("demo_not_representable").Inc()
			return
		}
		s.deadLetter(ctx, r, eventspb.ReasonCode_REASON_CODE_SCHEMA_INVALID, "unable to map the action onto the policy's heads: "+err.Error())
		return
	}
	s.take(&sample{feats: policy.Pack(f), choice: c, logpOld: tr.GetLogProbOld(), demo: demo, version: tr.GetPolicyVersion(),
		key: tr.GetFamily() + "/" + tr.GetSite()}, tr, now)
}

// take files a sample: a demonstration with the demonstrations, a policy
// step with its episode (released with its return when the episode, or
// its group, is done).
func (s *Service) take(smp *sample, tr *eventspb.Transition, now time.Time) {
	demo := smp.demo
	if demo {
		// Cloning needs no return: demonstrations skip the assembler.
		s.demos.add(smp)
		s.demoIn.Add(1)
		s.m.samples.WithLabelValues("demo").Inc()
		return
	}
	group := ""
	if s.o.hyper.Algo.Grouped() {
		group = tr.GetGroupId()
	}
	s.release(s.asm.add(tr.GetEpisodeId(), group, tr.GetStep(), smp, tr.GetReward(), tr.GetDone(), tr.GetSuccess(), now))
	if s.sync != nil && tr.GetDone() {
		// After its release: a batch this episode completes holds it.
		s.sync.ended(tr.GetPolicyVersion(), now)
	}
}

// countUniform counts as skipped the steps of GRPO groups whose returns
// were all equal: they carry no advantage, and were dropped uncounted
// before 12-07 (a third of the transitions of that day's lm hour).
func (s *Service) countUniform() {
	if n := s.asm.takeUniform(); n > 0 {
		s.m.skipped.WithLabelValues("uniform_group").Add(float64(n))
	}
}

// release files the samples the assembler let go (and counts the steps of
// the groups it dropped).
func (s *Service) release(ready []*sample) {
	s.countUniform()
	if len(ready) == 0 {
		return
	}
	if s.sync != nil {
		if !s.sync.add(ready[0].version, ready) {
			s.m.skipped.WithLabelValues("stale").Add(float64(len(ready)))
			return
		}
	} else {
		s.replay.add(ready...)
	}
	s.ingested.Add(int64(len(ready)))
	s.m.samples.WithLabelValues("policy").Add(float64(len(ready)))
}

// deadLetter sends a record the learner cannot use to the dlq.
func (s *Service) deadLetter(ctx context.Context, r *kgo.Record, code eventspb.ReasonCode, reason string) {
	s.m.deadLetters.WithLabelValues(code.String()).Inc()
	env := eventspb.NewEnvelope(s.o.instance)
	// The same source record always gives the same dead letter id: a
	// record dead-lettered again after a crash (its offset was not
	// committed yet) is recognised downstream as the same event.
	env.EventId = eventspb.DeterministicID("learner-dlq", r.Topic, strconv.FormatInt(int64(r.Partition), 10), strconv.FormatInt(r.Offset, 10))
	dl := eventspb.NewDeadLetter(env, eventspb.DeadLetterSource{
		Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Payload: r.Value, TimestampUnixNano: r.Timestamp.UnixNano(),
	}, "learner", "asyncwebrl.v1.Transition", code, reason)
	b, err := eventspb.Marshal(dl)
	if err != nil {
		s.log.Error("unable to encode a dead letter", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", err)
		return
	}
	s.log.Warn("transition dead-lettered", "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "reason", reason)
	s.producer.Produce(ctx, &kgo.Record{Topic: s.catalog.Name(topics.DLQ), Key: []byte(r.Topic), Value: b}, func(rec *kgo.Record, err error) {
		if err != nil {
			s.log.Error("unable to write a dead letter", "err", fmt.Errorf("unable to produce: %w", err),
				"source_topic", r.Topic, "source_partition", r.Partition, "source_offset", r.Offset)
		}
	})
}
