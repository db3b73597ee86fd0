package learner

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func episodeOf(version uint64, steps int) []*sample {
	out := make([]*sample, steps)
	for i := range out {
		out[i] = &sample{version: version}
	}
	return out
}

// A batch is handed over when the actors' batch of episodes is complete, or
// after syncGrace when one never arrives; episodes of an older version
// than the last published one are not part of it.
func TestSyncBatch(t *testing.T) {
	b := newSyncBatch(4)
	now := time.Unix(1000, 0)
	// episode files an episode's samples (none when held out, or dropped
	// in a uniform group) and counts it, as the learner's consumer does.
	episode := func(version uint64, steps int, at time.Time) bool {
		var ok bool
		if steps > 0 {
			ok = b.add(version, episodeOf(version, steps))
		}
		b.ended(version, at)
		return ok || steps == 0
	}
	for i := range 2 {
		if !episode(0, 2, now.Add(time.Duration(i)*time.Second)) {
			t.Fatal("an episode of the current version was refused")
		}
	}
	if got := b.take(now.Add(2 * time.Second)); got != nil {
		t.Fatalf("took %d samples with 2 of 4 episodes", len(got))
	}
	episode(0, 0, now.Add(2*time.Second)) // a held-out episode: no samples
	episode(0, 3, now.Add(3*time.Second))
	if got := b.take(now.Add(3 * time.Second)); len(got) != 7 {
		t.Fatalf("took %d samples of the complete batch, want 7", len(got))
	}
	if got := b.take(now.Add(4 * time.Second)); got != nil {
		t.Fatalf("took %d samples twice", len(got))
	}

	b.published(1)
	if b.add(0, episodeOf(0, 2)) {
		t.Fatal("a straggler of version 0 joined version 1's batch")
	}
	b.ended(0, now.Add(5*time.Second))
	episode(1, 4, now.Add(6*time.Second))
	if got := b.take(now.Add(6*time.Second + syncGrace - time.Millisecond)); got != nil {
		t.Fatalf("a short batch was taken before its grace (the straggler counted?): %d samples", len(got))
	}
	if got := b.take(now.Add(6*time.Second + syncGrace)); len(got) != 4 {
		t.Fatalf("a short batch after its grace gave %d samples, want 4", len(got))
	}
	b.published(2)
	for range 4 {
		episode(2, 0, now.Add(time.Minute))
	}
	if got := b.take(now.Add(time.Minute)); got == nil || len(got) != 0 {
		t.Fatalf("a batch of held-out episodes only gave %v, want an empty batch (a version must follow)", got)
	}
}

// TestSyncBatchUniformGroups: a batch whose GRPO groups all had equal
// returns releases no samples, but its episodes end all the same, and the
// actors get their next version (an empty batch) at once, not never (the
// 12-07 lm bench's sync runs, before the episodes were counted apart).
func TestSyncBatchUniformGroups(t *testing.T) {
	asm := newAssembler(0.95, true, 4, time.Minute)
	b := newSyncBatch(8)
	now := time.Unix(1000, 0)
	for g := range 2 {
		for e := range 4 {
			id := fmt.Sprintf("g%d-e%d", g, e)
			ready := asm.add(id, fmt.Sprintf("g%d", g), 0, &sample{version: 0}, 1, true, true, now)
			if len(ready) > 0 {
				b.add(ready[0].version, ready)
			}
			b.ended(0, now)
		}
	}
	if n := asm.takeUniform(); n != 8 {
		t.Fatalf("%d steps dropped in uniform groups, want 8", n)
	}
	if got := b.take(now); got == nil || len(got) != 0 {
		t.Fatalf("a batch of two uniform groups gave %v, want an empty batch at once", got)
	}
}

// The updates a batch gets: ceil(n × ratio / size) minibatches, each sample
// used ratio times on average (exactly, when the passes divide evenly).
func TestMinibatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := episodeOf(0, 16)
	mbs := minibatches(s, 8, 4, rng)
	if len(mbs) != 8 {
		t.Fatalf("%d minibatches, want 16×4/8 = 8", len(mbs))
	}
	uses := map[*sample]int{}
	for _, mb := range mbs {
		if len(mb) != 8 {
			t.Fatalf("a minibatch of %d, want 8", len(mb))
		}
		for _, x := range mb {
			uses[x]++
		}
	}
	for _, x := range s {
		if uses[x] != 4 {
			t.Fatalf("a sample used %d times, want 4 (4 whole passes)", uses[x])
		}
	}
	if mbs := minibatches(episodeOf(0, 3), 64, 8, rng); len(mbs) != 1 || len(mbs[0]) != 3 {
		t.Fatalf("a batch smaller than a minibatch: %d minibatches (first %d samples), want 1 of 3", len(mbs), len(mbs[0]))
	}
	if mbs := minibatches(nil, 8, 4, rng); mbs != nil {
		t.Fatalf("no samples gave %d minibatches", len(mbs))
	}
}
