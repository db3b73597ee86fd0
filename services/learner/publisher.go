package learner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
)

// errFenced: a newer learner initialised this policy's transactional id, so
// this one can never publish again. The learner stops (its process exits
// non-zero); it must not rebuild its producer, which would fence the new
// leader in turn with a version sequence it no longer knows.
var errFenced = errors.New("fenced: a newer learner of this policy took over its weights producer")

// errUnknownOutcome: a commit whose outcome the broker did not confirm. The
// version may be out or not, so publishing the next one could repeat or
// skip a number; the learner stops and its successor (or its restart)
// resumes from what the topic holds.
var errUnknownOutcome = errors.New("the outcome of the weights transaction is unknown")

// fatalPublish reports whether a publish error must stop the learner.
func fatalPublish(err error) bool {
	return errors.Is(err, errFenced) || errors.Is(err, errUnknownOutcome)
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
			kgo.ProducerBatchMaxBytes(32<<20),
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
			return &weightsProducer{cl: cl, id: id}, nil
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
	if err := p.cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		return p.classify(errors.Join(kafka.NewRecordError(rec, err), p.abort()))
	}
	err := p.cl.EndTransaction(ctx, kgo.TryCommit)
	if err == nil {
		return nil
	}
	err = fmt.Errorf("unable to commit: %w", err)
	if kafka.Fenced(err) {
		return p.classify(errors.Join(err, p.abort()))
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

// classify marks a fencing error with errFenced.
func (p *weightsProducer) classify(err error) error {
	if kafka.Fenced(err) {
		return fmt.Errorf("%w (transactional id %s): %w", errFenced, p.id, err)
	}
	return err
}

func (p *weightsProducer) close() { p.cl.Close() }
