package learner

import (
	"math/rand/v2"
	"sync"
	"time"
)

// syncBatch is the learner's half of the classic on-policy loop
// (WithSyncBatches; the actor's half is actor.WithOnPolicy): it collects the
// episodes acted since the last published version and hands them to the
// torch thread as one batch once every episode of the actors' batch has
// arrived, so each version is trained on exactly the episodes of the one
// before it, and the next batch is acted only after that.
type syncBatch struct {
	mu   sync.Mutex
	want int           // episodes per batch: the actors' executors
	wait time.Duration // how long after its last episode a short batch is trained anyway
	// minVersion is the version published last: episodes acted with an
	// older one are not of this batch.
	minVersion uint64
	episodes   int
	samples    []*sample
	last       time.Time
}

// syncGrace is how long a batch that misses episodes waits after its last
// arrival before it is trained on anyway: an episode aborted by a dead
// browser, or dead-lettered by the joiner, never reaches the learner, and the
// actors would wait for a version that never comes.
const syncGrace = 20 * time.Second

func newSyncBatch(want int) *syncBatch { return &syncBatch{want: want, wait: syncGrace} }

// add files the samples of released episodes (one episode, or a GRPO
// group) acted with version; false when it was acted with a version older
// than the last published one. The episodes themselves are counted by
// ended: a GRPO group whose returns were all equal releases no samples, and
// when the batch counted only what was released, a sync batch of uniform
// groups never filled and its actors waited for a version that never came
// (a 12-07 lm bench: 8 episodes, then no version in 6 minutes).
func (b *syncBatch) add(version uint64, samples []*sample) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if version < b.minVersion {
		return false
	}
	b.samples = append(b.samples, samples...)
	return true
}

// ended counts one episode of the actors' batch, acted with version, that
// reached the learner: trained on, held out (greedy, never trained on), or
// dropped in a group of equal returns. Call it after add has filed what the
// episode released, so a complete batch holds its samples.
func (b *syncBatch) ended(version uint64, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if version < b.minVersion {
		return
	}
	b.episodes++
	b.last = now
}

// take returns the batch when it is complete, or when it has waited b.wait
// since its last episode; nil otherwise.
func (b *syncBatch) take(now time.Time) []*sample {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.episodes == 0 || (b.episodes < b.want && now.Sub(b.last) < b.wait) {
		return nil
	}
	if len(b.samples) == 0 {
		// Only held-out episodes: nothing to train on, and the actors
		// still need a new version to go on.
		b.episodes = 0
		return []*sample{}
	}
	out := b.samples
	b.samples, b.episodes = nil, 0
	return out
}

// published starts the next batch: only episodes acted with version v or
// newer belong to it.
func (b *syncBatch) published(v uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.minVersion = v
}

// minibatches splits a batch's samples into the updates an epoch schedule
// gives them: ceil(n × ratio / size) minibatches of size samples drawn in
// shuffled passes over the batch, so each sample is used ratio times on
// average, as the asynchronous learner's replay ratio uses it.
func minibatches(samples []*sample, size int, ratio float64, rng *rand.Rand) [][]*sample {
	n := len(samples)
	if n == 0 {
		return nil
	}
	updates := max(1, int((float64(n)*ratio+float64(size)-1)/float64(size)))
	order := rng.Perm(n)
	next := 0
	out := make([][]*sample, updates)
	for u := range out {
		mb := make([]*sample, 0, min(size, n*updates))
		for len(mb) < size && len(mb) < n {
			if next == n {
				order, next = rng.Perm(n), 0
			}
			mb = append(mb, samples[order[next]])
			next++
		}
		out[u] = mb
	}
	return out
}
