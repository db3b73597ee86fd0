package learner

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
)

// train is the torch thread: it builds the model, reports ready, and then
// takes updates as experience allows. Behaviour cloning on demonstrations
// comes first (when any arrive); policy-gradient updates are paced so that
// each ingested sample is used replayRatio times on average.
func (s *Service) train(ctx context.Context, ready chan<- error) error {
	if s.o.frozen {
		ready <- nil
		s.log.Info("training off: the learner schedules tasks and ingests transitions; no weights are trained or published")
		<-ctx.Done()
		return nil
	}
	t, err := s.newStepper(ctx)
	if err != nil {
		return err
	}
	defer t.close()
	ready <- nil

	var bcUpdates int
	lastPublish := s.updates.Load()
	rng := rand.New(rand.NewPCG(s.o.seed, 0x5eed))
	var st stepStats
	var rounds [][]*sample // Epochs: the minibatches left of this round
	idle := time.NewTimer(0)
	defer idle.Stop()
	for ctx.Err() == nil {
		var batch []*sample
		switch {
		case s.o.bcUpdates > 0 && !s.bcDone.Load() && s.demos.len() >= s.o.batchSize/2:
			batch = s.demos.batch(s.o.batchSize)
			bcUpdates++
			if bcUpdates >= s.o.bcUpdates {
				s.bcDone.Store(true)
				s.log.Info("behaviour-cloning warm start done", "updates", bcUpdates, "demo_samples", s.demoIn.Load())
			}
		case s.sync != nil:
			if b := s.sync.take(time.Now()); b != nil {
				if st, err = s.trainSync(ctx, t, b, rng); err != nil {
					return err
				}
				lastPublish = s.updates.Load()
				continue
			}
		case s.o.sampling == Epochs:
			if len(rounds) == 0 && s.evictStale() >= s.epochChunk() {
				rounds = minibatches(s.replay.takeAll(), s.o.batchSize, s.o.replayRat, rng)
			}
			if len(rounds) > 0 {
				batch, rounds = rounds[0], rounds[1:]
				s.rounds.Store(int64(len(rounds)))
				s.rlDone.Add(1)
			}
		case s.evictStale() >= s.o.minReplay && float64(s.rlDone.Load()*int64(s.o.batchSize)) < float64(s.ingested.Load())*s.o.replayRat:
			batch = s.replay.batch(s.o.batchSize)
			s.rlDone.Add(1)
		}
		if batch == nil {
			idle.Reset(50 * time.Millisecond)
			select {
			case <-ctx.Done():
			case <-idle.C:
			}
			continue
		}
		rl := len(batch)
		if !batch[0].demo {
			batch = s.withDemos(batch)
		}
		t0 := time.Now()
		if st, err = t.step(batch); err != nil {
			return err
		}
		took := time.Since(t0)
		st.Staleness, st.MaxStaleness = staleness(batch, s.version.Load()+1)
		if !batch[0].demo {
			s.replay.reprioritize(batch[:rl], st.absAdv)
		}
		n := s.updated(st, took)
		if n-lastPublish >= int64(s.o.publishK) {
			if err := s.publish(ctx, t, st); err != nil {
				if fatalPublish(err) {
					return err
				}
				if ctx.Err() != nil {
					return nil
				}
				s.log.Error("unable to publish weights; training goes on", "err", err)
				continue
			}
			lastPublish = n
		}
	}
	// A last version with what was learned since the previous one, unless
	// the lease is gone: another learner may lead, and this one would
	// only be refused (its successor resumes from the last version out).
	unpublished := s.updates.Load() - lastPublish
	if unpublished > 0 && s.leaseLost() {
		s.log.Warn("final weights not published: this learner lost its lease", "updates_unpublished", unpublished)
	} else if unpublished > 0 {
		pctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := s.publish(pctx, t, st); err != nil {
			if errors.Is(err, errFenced) {
				s.log.Warn("final weights not published: a newer learner of this policy fenced this one", "err", err)
			} else {
				s.log.Warn("unable to publish the final weights", "err", err)
			}
		}
	}
	return nil
}

// newStepper is the trainer of the learner's model: the language model's
// (WithLanguageModel) or the features network's.
func (s *Service) newStepper(ctx context.Context) (stepper, error) {
	if s.lm != nil {
		hp := s.o.hyper
		if s.lm.cfg.LR > 0 {
			hp.LR = s.lm.cfg.LR
		}
		lt, err := newLMTrainer(s.lm.model, s.lm.cfg.TrainBlocks, hp, s.lm.cfg.frozenCacheBytes(), s.lm.cfg.Model, s.lm.cfg.KL)
		if err != nil {
			return nil, err
		}
		lt.tw.store = s.lm.cfg.Frozen
		return &lmStepper{t: lt, mode: s.lm, ctx: ctx}, nil
	}
	ft, err := newTrainer(s.arch, s.params, s.o.hyper)
	if err != nil {
		return nil, err
	}
	s.params = nil // the model owns them now
	return ft, nil
}

// trainSync is one round of the on-policy loop: the batch's minibatch
// updates, then the next version, published at once (the actors wait for
// it). A failed publish is retried: the actors cannot go on without it.
func (s *Service) trainSync(ctx context.Context, t stepper, batch []*sample, rng *rand.Rand) (stepStats, error) {
	var st stepStats
	var err error
	for _, mb := range s.syncMinibatches(batch, rng) {
		t0 := time.Now()
		if st, err = t.step(mb); err != nil {
			return st, err
		}
		st.Staleness, st.MaxStaleness = staleness(mb, s.version.Load()+1)
		s.updated(st, time.Since(t0))
	}
	for ctx.Err() == nil {
		if err := s.publish(ctx, t, st); err != nil {
			if fatalPublish(err) {
				return st, err
			}
			s.log.Error("unable to publish weights; the on-policy actors wait for them, retrying", "err", err)
			_ = backoff.Sleep(ctx, time.Second)
			continue
		}
		s.sync.published(s.version.Load())
		break
	}
	return st, nil
}

// syncMinibatches splits an on-policy round into its minibatches, each
// with the same demonstration share as the async loop's batches (withDemos):
// bench train compares the modes, and a cloning term in one of them only
// would be a difference of objective, not of schedule.
func (s *Service) syncMinibatches(batch []*sample, rng *rand.Rand) [][]*sample {
	mbs := minibatches(batch, s.o.batchSize, s.o.replayRat, rng)
	for i := range mbs {
		mbs[i] = s.withDemos(mbs[i])
	}
	return mbs
}

// updated records one gradient update that took took: the counters, the
// loss and entropy gauges and the stats the next version is published
// with. It returns the update count.
func (s *Service) updated(st stepStats, took time.Duration) int64 {
	s.m.updateSeconds.Observe(took.Seconds())
	if st.FrozenHits+st.FrozenLoaded+st.FrozenComputed > 0 {
		s.m.frozenCache.WithLabelValues("hit").Add(float64(st.FrozenHits))
		s.m.frozenCache.WithLabelValues("actor").Add(float64(st.FrozenLoaded))
		s.m.frozenCache.WithLabelValues("computed").Add(float64(st.FrozenComputed))
	}
	if st.FrozenLoadFailed > 0 {
		s.log.Warn("unable to read the actors' frozen-block states: computed instead", "samples", st.FrozenLoadFailed)
	}
	n := s.updates.Add(1)
	s.m.updates.Inc()
	s.m.loss.Set(st.Loss)
	s.m.entropy.Set(st.Entropy)
	s.statsMu.Lock()
	s.last = st
	s.statsMu.Unlock()
	return n
}

// behind is how many versions of policy-gradient updates the learner owes
// to the samples it has ingested (by its replay ratio; publish-every
// updates a version) and can still do: no more than what its replay (and
// an Epochs round under way) holds, so samples dropped as stale never keep
// the rollout waiting for updates that cannot happen. It is 0 while the
// learner waits for data (below the replay's minimum, or an Epochs round's
// chunk) and during the warm start: holding the rollout back then would
// starve it.
func (s *Service) behind() float64 {
	if s.o.bcUpdates > 0 && !s.bcDone.Load() && s.demos.len() > 0 {
		return 0
	}
	perSample := s.o.replayRat / float64(s.o.batchSize)
	can := float64(s.rounds.Load())
	if n := s.replay.len(); n >= s.startAt() {
		can += float64(n) * perSample
	}
	owed := float64(s.ingested.Load())*perSample - float64(s.rlDone.Load())
	return max(0, min(owed, can)/float64(s.o.publishK))
}

// startAt is the replay size at which the learner trains: the replay's
// minimum, or with Epochs, the next round's chunk.
func (s *Service) startAt() int {
	if s.o.sampling == Epochs {
		return s.epochChunk()
	}
	return s.o.minReplay
}

// evictStale drops the replay's samples more than the max policy lag
// behind the newest version, as ingestion does (WithMaxPolicyLag), and
// returns the replay's size. The replay is scanned once per version: in
// between, ingestion keeps out what this would drop. Torch thread only.
func (s *Service) evictStale() int {
	if lag, v := s.o.maxLag, s.version.Load(); lag > 0 && v > lag && v != s.evictedAt {
		s.evictedAt = v
		if n := s.replay.evictBefore(v - lag); n > 0 {
			s.m.skipped.WithLabelValues("stale").Add(float64(n))
		}
	}
	return s.replay.len()
}

// epochChunk is the least an Epochs round trains on: one version's worth
// of samples (publish-every updates at the replay ratio), and the replay's
// minimum before the first.
func (s *Service) epochChunk() int {
	n := max(1, int(float64(s.o.publishK*s.o.batchSize)/s.o.replayRat))
	if s.rlDone.Load() == 0 {
		n = max(n, s.o.minReplay)
	}
	return n
}

// withDemos appends the demonstration share of a policy-gradient batch
// (WithDemoMix) once the warm start is over: the behaviour-cloning term
// keeps pulling toward the demonstrations, so a task demonstrated at the
// start is not forgotten before the curriculum reaches it (the hard tier
// unlocks long after the warm start ends).
func (s *Service) withDemos(batch []*sample) []*sample {
	k := int(math.Round(s.o.demoMix * float64(s.o.batchSize)))
	if k == 0 || s.demos.len() == 0 || (s.o.bcUpdates > 0 && !s.bcDone.Load()) {
		return batch
	}
	return append(batch, s.demos.batch(k)...)
}
