package learner

import (
	"container/list"

	"github.com/sugarme/gotch/ts"

	"github.com/asyncwebrl/asyncwebrl/services/lm/llama"
)

// The frozen blocks' output of a sample, kept between the updates that
// draw it.
//
// Why: the learner trains the top blocks of the language model only, so
// what the frozen blocks make of a sample's tokens never changes, and it is
// most of an update's cost (SmolLM2 with two blocks trained: 28 of 30
// blocks forward, against the top two forward and back). A sample is
// drawn more than once: a demonstration once in every few warm-start
// updates (12-06: 60 demonstrations gave 70 samples, which 40 updates of
// 8 draw 320 times), a policy sample up to the replay ratio. Each draw
// after the first then costs the trainable blocks alone.
//
// The cache is the twin's, on the torch thread: a least-recently-used list
// of tensors within a byte budget. A sample holds a slot (lmSample.frozen),
// which its copies share; the list owns the tensor, so a sample that leaves
// the replay frees nothing itself and its entry ages out.

// DefaultFrozenCacheBytes is the cache's budget when LMConfig gives none:
// 1 GiB, about 650 SmolLM2 samples of 450 tokens past the system message
// (1.0 MB each in float32).
const DefaultFrozenCacheBytes = 1 << 30

// frozenSlot is a sample's place in the cache: empty until the sample's
// first pass, emptied when the cache evicts it.
type frozenSlot struct {
	x *ts.Tensor // [T, W]: the frozen blocks' output after the prefix
	// ref names the actor's copy of it, when the actor kept one
	// (Action.lm.frozen_sha256): a miss loads it instead of running the
	// frozen blocks.
	ref *frozenRef
	// n is the number of tokens x covers, gen the prefix it was computed
	// after (lmTwin.prefixGen): a slot of another prefix is a miss.
	n    int
	gen  uint64
	elem *list.Element
	size int64
}

// frozenRef is an actor's record of a sample's frozen-block output: the
// blob in the run's store (llama.HiddenFormat), the blocks it is after and
// its rows (the tokens past the system message the actor fed).
type frozenRef struct {
	sha          string
	blocks, rows int
}

// load reads ref's states from store as a tensor [rows, W], if they are
// the ones the twin needs: after its frozen blocks, for n tokens past a
// matching prefix.
func (t *lmTwin) load(ref *frozenRef, n int, prefixed bool) (*ts.Tensor, error) {
	if t.store == nil || ref == nil || !prefixed || ref.blocks != t.frozen() || ref.rows != n {
		return nil, nil
	}
	b, err := t.store.Get(ref.sha)
	if err != nil {
		return nil, err
	}
	w := t.shape.Width
	data, err := llama.DecodeHidden(b, ref.rows, w)
	if err != nil {
		return nil, err
	}
	return float32Tensor(data, int64(ref.rows), int64(w))
}

// frozenCache holds slots' tensors within budget bytes.
type frozenCache struct {
	budget, used int64
	lru          *list.List // of *frozenSlot, most recent first
	hits, misses int64
}

func newFrozenCache(budget int64) *frozenCache {
	return &frozenCache{budget: budget, lru: list.New()}
}

// get is slot's tensor for n tokens after prefix gen, or nil. The tensor
// stays the cache's: the caller must not drop it.
func (c *frozenCache) get(slot *frozenSlot, n int, gen uint64) *ts.Tensor {
	if c == nil || slot == nil {
		return nil
	}
	if slot.x == nil || slot.n != n || slot.gen != gen {
		c.misses++
		return nil
	}
	c.hits++
	c.lru.MoveToFront(slot.elem)
	return slot.x
}

// put gives x to the cache as slot's and reports whether it took it (then
// the caller must not drop x). A tensor over the whole budget is not taken;
// older slots are evicted to make room.
func (c *frozenCache) put(slot *frozenSlot, x *ts.Tensor, n int, gen uint64, size int64) bool {
	if c == nil || slot == nil || size > c.budget {
		return false
	}
	c.evict(slot)
	for c.used+size > c.budget {
		c.evict(c.lru.Back().Value.(*frozenSlot))
	}
	slot.x, slot.n, slot.gen, slot.size = x, n, gen, size
	slot.elem = c.lru.PushFront(slot)
	c.used += size
	return true
}

// evict empties slot, dropping its tensor.
func (c *frozenCache) evict(slot *frozenSlot) {
	if slot.x == nil {
		return
	}
	_ = slot.x.Drop()
	c.lru.Remove(slot.elem)
	c.used -= slot.size
	slot.x, slot.elem, slot.size = nil, nil, 0
}

// clear drops every tensor (the twin's close).
func (c *frozenCache) clear() {
	if c == nil {
		return
	}
	for c.lru.Len() > 0 {
		c.evict(c.lru.Front().Value.(*frozenSlot))
	}
}
