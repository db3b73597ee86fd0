package learner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/weightstopic"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// errFenced: a newer learner initialised this policy's transactional id, so
// this one can never publish again. The learner stops (its process exits
// non-zero); it must not rebuild its producer, which would fence the new
// leader in turn with a version sequence it no longer knows.
var errFenced = errors.New("fenced: a newer learner of this policy took over its weights producer")

// errUnknownOutcome: a commit whose outcome the broker did not confirm. The
// version may be out or not, so publishing the next one could repeat or
// skip a number. A leader settles it (publishSettled); what cannot stops,
// and its successor (or its restart) resumes from what the topic holds.
var errUnknownOutcome = errors.New("the outcome of the weights transaction is unknown")

// weightsMaxBytes is the largest version record the learner sends: what
// the weights topic takes (topics.MaxMessageBytes), less a margin for the
// record batch's own framing. franz-go refuses a larger record before it
// is sent (kerr.MessageTooLarge), whatever zstd would make of it.
const weightsMaxBytes = topics.MaxMessageBytes - 64<<10

// VersionTooLargeError is a version's record larger than the weights topic
// takes. Every later version of the run is as large (the same tensors), so
// it stops the learner (fatalPublish) rather than train on unpublished.
type VersionTooLargeError struct {
	Bytes, Max int
}

func (e *VersionTooLargeError) Error() string {
	return fmt.Sprintf("the version's record is %.1f MiB, more than the weights topic takes (%.1f MiB): train a smaller part of the model (fewer -lm-train-blocks)",
		float64(e.Bytes)/(1<<20), float64(e.Max)/(1<<20))
}

// fatalPublish reports whether a publish error must stop the learner. A
// version too large for the weights topic is fatal too: the next one is
// as large, so training on would publish nothing (12-07: an hour with
// -lm-train-blocks=4 trained for 6 minutes at version 0, its 52 MB
// versions each refused, before it was stopped by hand).
func fatalPublish(err error) bool {
	var tooLarge *VersionTooLargeError
	return errors.Is(err, errFenced) || errors.Is(err, errUnknownOutcome) || errors.Is(err, errLeaseLost) ||
		errors.As(err, &tooLarge) || errors.Is(err, kerr.MessageTooLarge) || errors.Is(err, kerr.RecordListTooLarge)
}

// weightsTxnID is the transactional id of a policy's weights producer: the
// same for every learner of the policy, which is what lets a new leader
// fence the old one.
func weightsTxnID(prefix, policy string) string { return prefix + "learner-" + policy }

// weightsProducer publishes a policy's versions, one transaction each,
// under the policy's transactional id. Readers read committed, so a version
// is seen only once its transaction committed, and a learner fenced with a
// transaction open has it aborted by the coordinator.
type weightsProducer struct {
	cl *kgo.Client
	id string
	// What a claim again needs (settle).
	f    *kafka.Factory
	name string
	log  *slog.Logger
	// onSettled, when set, counts each settled commit by its outcome
	// ("committed", "republished").
	onSettled func(outcome string)
	// testHookBeforeCommit runs between a publish's produce and its
	// commit; tests end the transaction there behind the producer's back.
	testHookBeforeCommit func()
	// attemptTimeout bounds one publish attempt in publishSettled
	// (default publishTimeout); tests shorten it.
	attemptTimeout time.Duration
	// fenced is set by the first fencing error: from then on publish
	// sends nothing (no abort, no new transaction) and returns errFenced.
	// A fenced producer's requests can only be refused (or, for an EndTxn
	// at the epoch just before the current one, be taken for a retry of
	// the new leader's), so it sends none. Torch thread only, like publish.
	fenced error
}

// claimWeights opens the policy's weights producer and initialises its
// producer id at once. That InitProducerId is the fence: the coordinator
// aborts what the previous producer of the id left open and bumps the
// epoch, so from here on nothing the previous leader sends can commit. It
// must happen before the newest version is read (resume): every version
// committed before it is then seen, and none can commit after it. It
// retries until ctx ends (the coordinator answers CONCURRENT_TRANSACTIONS
// while it aborts, and a broker may be coming back).
func claimWeights(ctx context.Context, f *kafka.Factory, name, id string, log *slog.Logger) (*weightsProducer, error) {
	wait := backoff.Backoff{Min: 500 * time.Millisecond, Max: 5 * time.Second}
	for {
		cl, err := f.NewClient(name,
			kgo.TransactionalID(id),
			kgo.TransactionTimeout(time.Minute),
			kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.ProducerBatchCompression(kgo.ZstdCompression()),
			kgo.ProducerBatchMaxBytes(weightsMaxBytes),
		)
		if err != nil {
			return nil, err
		}
		ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
		pid, epoch, err := cl.ProducerID(ictx)
		cancel()
		if err == nil {
			log.Info("weights producer claimed; earlier producers of the policy are fenced",
				"transactional_id", id, "producer_id", pid, "epoch", epoch)
			return &weightsProducer{cl: cl, id: id, f: f, name: name, log: log}, nil
		}
		cl.Close()
		err = fmt.Errorf("unable to initialise the weights producer %s: %w", id, err)
		log.Warn("claiming the weights producer failed; retrying", "err", err)
		if werr := wait.Wait(ctx); werr != nil {
			return nil, errors.Join(err, werr)
		}
	}
}

// publish writes rec in a transaction of its own and commits it. A fenced
// producer returns errFenced; a commit the broker did not confirm returns
// errUnknownOutcome; any other error means nothing was committed, and the
// same version may be published again.
func (p *weightsProducer) publish(ctx context.Context, rec *kgo.Record) error {
	if p.fenced != nil {
		return p.fenced
	}
	if err := p.cl.BeginTransaction(); err != nil {
		// A transaction an earlier failed abort left open: abort it
		// again, then begin.
		if aerr := p.abort(); aerr != nil {
			return p.classify(errors.Join(fmt.Errorf("unable to begin a transaction: %w", err), aerr))
		}
		if err := p.cl.BeginTransaction(); err != nil {
			return p.classify(fmt.Errorf("unable to begin a transaction: %w", err))
		}
	}
	// franz-go keeps the context of a record's first Produce on the record
	// (Record.Context) and fails it once that context ends: a version
	// published again after a settle would carry the spent attempt's.
	rec.Context = nil
	if err := p.cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		err = kafka.NewRecordError(rec, err)
		if kafka.Fenced(err) {
			// The new leader's claim aborted this transaction
			// already: nothing to abort.
			return p.classify(err)
		}
		return p.classify(errors.Join(err, p.abort()))
	}
	if p.testHookBeforeCommit != nil {
		p.testHookBeforeCommit()
	}
	err := p.cl.EndTransaction(ctx, kgo.TryCommit)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("unable to commit: %w", err)
	if kafka.Fenced(err) {
		return p.classify(err) // as above: aborted by the claim
	}
	if errors.Is(err, kerr.OperationNotAttempted) || errors.Is(err, kerr.TransactionAbortable) {
		// The commit was not sent, or the broker refused it: aborting
		// leaves nothing committed.
		return p.classify(errors.Join(err, p.abort()))
	}
	// Sent, but not confirmed. The abort that franz-go asks for next
	// settles it (it reloads the producer id, which ends the transaction
	// one way or the other) but cannot say which way.
	return errors.Join(errUnknownOutcome, err, p.abort())
}

// publishTimeout bounds one publish attempt: its produce and its commit.
const publishTimeout = 30 * time.Second

// settleTimeout bounds settling a commit whose outcome is unknown: claiming
// the producer again (retried while a slow broker recovers), reading the
// newest version and publishing again. It is a budget of its own, not what
// the attempt left: the attempt that ends unknown is usually one whose
// commit ran out of time, and then nothing is left (12-06: a broker short
// of direct memory answered nothing for seconds, the commit took all 30 s,
// the claim failed at once on the spent deadline and the learner stopped).
const settleTimeout = 2 * time.Minute

// publishSettled is publish for the leading learner, which must not stop
// at a commit whose outcome is unknown (the broker did not confirm it, or
// refused it in a state no fencing explains) while it still leads. It
// settles it: a new claim of the producer ends the transaction one way or
// the other and fences whatever else holds the id (so it is done only once
// awaitLead says the lease is this learner's), then the newest committed
// version says whether ev is out. If it is not, rec is published again
// under the new claim; if a version as new as ev's is out from anyone
// else, this learner is not the policy's publisher any more (errFenced).
// ctx is the learner's: the attempt is bounded by publishTimeout within it,
// and the settle by settleTimeout.
func (p *weightsProducer) publishSettled(ctx context.Context, rec *kgo.Record, ev *eventspb.Weights, topic string, awaitLead func(context.Context) error) error {
	attempt := p.attemptTimeout
	if attempt <= 0 {
		attempt = publishTimeout
	}
	actx, cancel := context.WithTimeout(ctx, attempt)
	err := p.publish(actx, rec)
	cancel()
	if !errors.Is(err, errUnknownOutcome) {
		return err
	}
	ctx, cancel = context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	if lerr := awaitLead(ctx); lerr != nil {
		return errors.Join(err, lerr)
	}
	p.log.Warn("the outcome of a weights commit is unknown; claiming the weights producer again to settle it",
		"version", ev.GetVersion(), "err", err)
	np, cerr := claimWeights(ctx, p.f, p.name, p.id, p.log)
	if cerr != nil {
		return errors.Join(err, cerr)
	}
	p.cl.Close()
	p.cl, p.fenced = np.cl, nil
	newClient := func(opts ...kgo.Opt) (*kgo.Client, error) { return p.f.NewClient(p.name+"-settle", opts...) }
	latest, lerr := weightstopic.Latest(ctx, newClient, topic, ev.GetPolicyName(), p.log, nil)
	if lerr != nil {
		return errors.Join(err, fmt.Errorf("unable to settle the weights commit: %w", lerr))
	}
	switch {
	case latest.GetVersion() == ev.GetVersion() && latest.GetOnnxSha256() == ev.GetOnnxSha256() &&
		latest.GetEnvelope().GetProducer() == ev.GetEnvelope().GetProducer():
		p.log.Info("settled: the weights commit had gone through", "version", ev.GetVersion())
		p.settled("committed")
		return nil
	case latest.GetVersion() >= ev.GetVersion():
		return fmt.Errorf("%w: version %d is out, published by %s", errFenced, latest.GetVersion(), latest.GetEnvelope().GetProducer())
	}
	p.log.Info("settled: the weights commit had not gone through; publishing the version again", "version", ev.GetVersion(),
		"newest", latest.GetVersion())
	if err := p.publish(ctx, rec); err != nil {
		return err
	}
	p.settled("republished")
	return nil
}

func (p *weightsProducer) settled(outcome string) {
	if p.onSettled != nil {
		p.onSettled(outcome)
	}
}

// abort ends the open transaction without committing, under a bound of its
// own (the publish's context may be what ended).
func (p *weightsProducer) abort() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := p.cl.EndTransaction(ctx, kgo.TryAbort); err != nil {
		return fmt.Errorf("unable to abort the weights transaction: %w", err)
	}
	return nil
}

// classify marks a fencing error with errFenced and retires the producer.
func (p *weightsProducer) classify(err error) error {
	if kafka.Fenced(err) {
		p.fenced = fmt.Errorf("%w (transactional id %s): %w", errFenced, p.id, err)
		return p.fenced
	}
	return err
}

func (p *weightsProducer) close() { p.cl.Close() }
