package learner

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/weightstopic"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// idleEnd is how long a read of a topic to its end waits for more records
// before it takes what it read as all there is.
const idleEnd = 5 * time.Second

// OfflineResult is what a training run over history did.
type OfflineResult struct {
	Records, Samples, Episodes int64
	Updates                    int
	Version                    uint64
	ONNX                       []byte
	Loss, Entropy              float64
	Took                       time.Duration
}

// TrainOffline trains a fresh policy from a transitions topic read from its
// start to its current end, with no actors running, and publishes it as
// the first version of this learner's policy name. The topic is read once
// into the replay buffer (whole episodes only; what cannot be trained on
// goes to the dlq as in the live learner), then the learner takes
// replayRatio·samples/batch updates. With successOnly, only the steps of
// successful episodes are kept and cloned (filtered behaviour cloning, a
// robust choice for data collected by many past policies).
func (s *Service) TrainOffline(ctx context.Context, topic string, successOnly bool, progress func(string)) (OfflineResult, error) {
	var res OfflineResult
	t0 := time.Now()
	var err error
	if s.producer, err = s.factory.NewClient("learner-offline",
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchCompression(kgo.ZstdCompression()), kgo.ProducerBatchMaxBytes(weightsMaxBytes)); err != nil {
		return res, err
	}
	defer s.closeClients()
	s.arch, s.params = s.o.arch, s.o.arch.NewParams(s.o.seed)
	// Claimed before the newest version is read, as a leader does: a live
	// learner of the same name is fenced, and cannot publish the version
	// this one is about to.
	if s.weights, err = claimWeights(ctx, s.factory, "learner-offline-publish", weightsTxnID(s.catalog.Prefix, s.o.policyName), s.log); err != nil {
		return res, err
	}
	// A fresh model, but the policy name's version sequence goes on.
	latest, err := weightstopic.Latest(ctx, s.newClient("learner-offline-weights"), s.catalog.Name(topics.Weights), s.o.policyName, s.log, nil)
	if err != nil {
		return res, err
	}
	s.version.Store(latest.GetVersion())
	// Everything read stays: an offline buffer is the whole history.
	s.replay = newReplay(1<<30, 0, s.o.sampling, s.o.seed)
	s.asm = newAssembler(s.o.gamma, s.o.hyper.Algo.Grouped(), s.o.groupSize, s.o.openTTL)
	if successOnly {
		s.asm.keep = func(ret float64, success bool) bool { return success }
	}

	adm := kadm.NewClient(s.producer)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return res, fmt.Errorf("unable to read the end of %s: %w", topic, err)
	}
	if err := ends.Error(); err != nil {
		return res, fmt.Errorf("unable to read the end of %s: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return res, fmt.Errorf("unable to read the start of %s: %w", topic, err)
	}
	assign := map[int32]kgo.Offset{}
	remaining := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		st, _ := starts.Lookup(topic, o.Partition)
		if o.Offset > st.Offset {
			assign[o.Partition] = kgo.NewOffset().At(st.Offset)
			remaining[o.Partition] = o.Offset
		}
	})
	if len(assign) == 0 {
		return res, fmt.Errorf("unable to train from %s: the topic is empty", topic)
	}
	cl, err := s.factory.NewClient("learner-offline-read", kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}), kgo.FetchMaxBytes(64<<20),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		return res, err
	}
	defer cl.Close()
	now := time.Now()
	// A partition written in transactions (the joiner's) ends with a
	// commit marker, an offset no record is ever returned for: when nothing
	// comes for a while, what was there has been read.
	l := &kafka.Loop{Name: "learner offline read", Poller: cl, Log: s.log, Idle: func() time.Duration { return idleEnd },
		Handle: func(ctx context.Context, fs kgo.Fetches) error {
			if fs.NumRecords() == 0 {
				return kafka.ErrStop
			}
			fs.EachRecord(func(r *kgo.Record) {
				end, ok := remaining[r.Partition]
				if !ok || r.Offset >= end {
					return
				}
				res.Records++
				s.ingest(ctx, r, now)
				if r.Offset+1 >= end {
					delete(remaining, r.Partition)
				}
			})
			if progress != nil && res.Records%5000 < int64(fs.NumRecords()) {
				progress(fmt.Sprintf("read %d transitions, %d samples", res.Records, s.replay.len()))
			}
			if len(remaining) == 0 {
				return kafka.ErrStop
			}
			return nil
		}}
	if err := l.Run(ctx); err != nil {
		return res, fmt.Errorf("unable to read %s: %w", topic, err)
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("unable to read %s: %w", topic, err)
	}
	ready, _ := s.asm.expire(now.Add(2 * s.o.openTTL))
	s.release(ready)
	res.Samples = int64(s.replay.len())
	if res.Samples < int64(s.o.batchSize) {
		return res, fmt.Errorf("unable to train from %s: %d usable samples, fewer than one batch of %d", topic, res.Samples, s.o.batchSize)
	}
	res.Updates = max(1, int(float64(res.Samples)*s.o.replayRat/float64(s.o.batchSize)))
	if successOnly {
		// Cloned steps are demonstrations for the trainer.
		for _, smp := range s.replay.items {
			smp.demo = true
		}
	}
	err = onTorchThread(func() error {
		t, err := s.newStepper(ctx)
		if err != nil {
			return err
		}
		defer t.close()
		var st stepStats
		for i := range res.Updates {
			if err := ctx.Err(); err != nil {
				return err
			}
			if st, err = t.step(s.replay.batch(s.o.batchSize)); err != nil {
				return err
			}
			s.updates.Add(1)
			if progress != nil && (i+1)%100 == 0 {
				progress(fmt.Sprintf("update %d/%d loss %.3f entropy %.3f", i+1, res.Updates, st.Loss, st.Entropy))
			}
		}
		res.Loss, res.Entropy = st.Loss, st.Entropy
		if err := s.publish(ctx, t, st); err != nil {
			return err
		}
		res.ONNX, _, _, _, err = t.export()
		return err
	})
	if err != nil {
		return res, err
	}
	if err := s.producer.Flush(ctx); err != nil {
		return res, fmt.Errorf("unable to flush: %w", err)
	}
	res.Version, res.Took = s.version.Load(), time.Since(t0)
	return res, nil
}
