package learner

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/asyncwebrl/asyncwebrl/services/internal/enum"
)

// Sampling is how the replay buffer picks a batch.
type Sampling string

const (
	// FIFO keeps the newest samples and draws uniformly among them.
	FIFO Sampling = "fifo"
	// Prioritized draws in proportion to (|advantage| + ε)^α, the
	// advantage seen the last time the sample was trained on: surprising
	// steps are replayed more.
	Prioritized Sampling = "prioritized"
	// Epochs trains on samples as they arrive, the way the on-policy
	// learner trains on its batch: all that arrived since the last round
	// (at least one version's worth: publish-every × batch size / replay
	// ratio), shuffled into minibatches that use each of them replay-ratio
	// times, after which they leave. No task balancing, as in the on-policy
	// loop; offline training (replay train) draws uniformly.
	Epochs Sampling = "epochs"
)

// Samplings are the ways -replay offers.
var Samplings = []Sampling{FIFO, Prioritized, Epochs}

// ParseSampling checks a flag value.
func ParseSampling(s string) (Sampling, error) {
	return enum.Parse("replay sampling", s, Samplings...)
}

// Prioritized replay's exponent and floor.
const (
	prioAlpha = 0.6
	prioEps   = 0.05
)

// replay is a bounded buffer of samples. Batches are task-balanced: a task
// key (family/site) is drawn uniformly among those present, then a sample of
// it, so a family that yields long episodes or many steps does not crowd
// out the others. Samples leave when the buffer is full (oldest first) or
// after maxUses batches.
type replay struct {
	mu sync.Mutex
	// capacity: the replay buffer's size in samples (default 4096);
	// small keeps PPO near on-policy.
	capacity int
	// maxUses: a sample is evicted after it was in this many batches (default 8).
	maxUses int
	kind    Sampling
	rng     *rand.Rand
	items   []*sample // oldest first
	added   int64
}

func newReplay(capacity, maxUses int, kind Sampling, seed uint64) *replay {
	return &replay{capacity: capacity, maxUses: maxUses, kind: kind, rng: rand.New(rand.NewPCG(seed, 7))}
}

func (r *replay) add(ss ...*sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range ss {
		if s.prio == 0 {
			s.prio = 1 // new samples are drawn at least once soon
		}
	}
	r.items = append(r.items, ss...)
	r.added += int64(len(ss))
	if over := len(r.items) - r.capacity; over > 0 {
		r.items = slices.Delete(r.items, 0, over)
	}
}

// evictBefore drops the samples acted with a policy version older than v
// and returns how many it dropped. FIFO alone does not bound the replay's
// age: updates are paced by ingestion, so evictions (after maxUses draws)
// match arrivals and the buffer keeps the size it grew to while the
// learner was behind, hundreds of updates of old data (ARCHITECTURE.md,
// "staleness bound").
func (r *replay) evictBefore(v uint64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.items)
	r.items = slices.DeleteFunc(r.items, func(s *sample) bool { return s.version < v })
	return n - len(r.items)
}

// takeAll empties the buffer and returns its samples, oldest first.
func (r *replay) takeAll() []*sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.items
	r.items = nil
	return out
}

// bytes is the memory of the buffered samples' inputs.
func (r *replay) bytes() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.items {
		n += s.bytes()
	}
	return n
}

func (r *replay) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.items)
}

// batch draws n samples (with replacement across keys, without within one
// draw where possible). It returns nil when the buffer is empty.
func (r *replay) batch(n int) []*sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.items) == 0 {
		return nil
	}
	byKey := map[string][]int{}
	var keys []string
	for i, s := range r.items {
		if _, ok := byKey[s.key]; !ok {
			keys = append(keys, s.key)
		}
		byKey[s.key] = append(byKey[s.key], i)
	}
	slices.Sort(keys) // map order must not leak into a seeded draw
	out := make([]*sample, 0, n)
	for range n {
		idx := byKey[keys[r.rng.IntN(len(keys))]]
		out = append(out, r.items[r.pick(idx)])
	}
	for _, s := range out {
		s.uses++
	}
	if r.maxUses > 0 {
		r.items = slices.DeleteFunc(r.items, func(s *sample) bool { return s.uses >= r.maxUses })
	}
	return out
}

func (r *replay) pick(idx []int) int {
	if r.kind != Prioritized {
		return idx[r.rng.IntN(len(idx))]
	}
	var total float64
	for _, i := range idx {
		total += math.Pow(r.items[i].prio+prioEps, prioAlpha)
	}
	x := r.rng.Float64() * total
	for _, i := range idx {
		x -= math.Pow(r.items[i].prio+prioEps, prioAlpha)
		if x <= 0 {
			return i
		}
	}
	return idx[len(idx)-1]
}

// reprioritize records the advantages last seen for a batch's samples.
func (r *replay) reprioritize(batch []*sample, absAdv []float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, s := range batch {
		if i < len(absAdv) {
			s.prio = absAdv[i]
		}
	}
}
