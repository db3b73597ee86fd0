package learner

import (
	"math"
	"slices"
	"time"
)

// assembler holds transitions until their episode ends, because returns
// (and GRPO's group-relative advantages) need the whole episode. Episodes
// of a GRPO group wait for each other.
type assembler struct {
	// gamma: the discount of returns (default 0.95).
	gamma     float64
	grpo      bool
	groupSize int
	ttl       time.Duration
	// keep, when set, decides from an episode's return and success
	// whether its steps are trained on (filtered cloning keeps successes).
	keep func(ret float64, success bool) bool

	open   map[string]*openEpisode
	groups map[string]*openGroup
	// uniform counts the steps of groups dropped since the last
	// takeUniform because their returns were all equal (GRPO's advantage
	// is 0 for every one of them), so the learner can count them as
	// skipped instead of losing them silently.
	uniform int
}

type openEpisode struct {
	id    string
	group string
	steps map[uint32]*step
	seen  time.Time
}

type step struct {
	s      *sample
	reward float64
}

type openGroup struct {
	episodes [][]*sample
	returns  []float64
	seen     time.Time
}

func newAssembler(gamma float64, grpo bool, groupSize int, ttl time.Duration) *assembler {
	return &assembler{gamma: gamma, grpo: grpo, groupSize: groupSize, ttl: ttl,
		open: map[string]*openEpisode{}, groups: map[string]*openGroup{}}
}

// add takes one transition's sample; it returns the samples that became
// ready for training (the whole episode, or a whole group).
func (a *assembler) add(episodeID, group string, t uint32, s *sample, reward float64, done, success bool, now time.Time) []*sample {
	ep := a.open[episodeID]
	if ep == nil {
		ep = &openEpisode{id: episodeID, group: group, steps: map[uint32]*step{}}
		a.open[episodeID] = ep
	}
	ep.seen = now
	if _, dup := ep.steps[t]; !dup {
		ep.steps[t] = &step{s: s, reward: reward}
	}
	if !done {
		return nil
	}
	delete(a.open, episodeID)
	samples, ret := a.finish(ep)
	if a.keep != nil && !a.keep(ret, success) {
		return nil
	}
	if !a.grpo || ep.group == "" {
		return samples
	}
	g := a.groups[ep.group]
	if g == nil {
		g = &openGroup{}
		a.groups[ep.group] = g
	}
	g.seen = now
	g.episodes = append(g.episodes, samples)
	g.returns = append(g.returns, ret)
	if len(g.episodes) < a.groupSize {
		return nil
	}
	delete(a.groups, ep.group)
	return a.release(g)
}

// release gives a whole group its advantages (releaseGroup), counting the
// steps of a group that teaches nothing.
func (a *assembler) release(g *openGroup) []*sample {
	out := releaseGroup(g)
	if out == nil {
		for _, e := range g.episodes {
			a.uniform += len(e)
		}
	}
	return out
}

// takeUniform returns the steps dropped in uniform groups since the last
// call.
func (a *assembler) takeUniform() int {
	n := a.uniform
	a.uniform = 0
	return n
}

// finish computes discounted returns-to-go in step order and the episode's
// undiscounted return.
func (a *assembler) finish(ep *openEpisode) ([]*sample, float64) {
	ts := make([]uint32, 0, len(ep.steps))
	for t := range ep.steps {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	out := make([]*sample, len(ts))
	var g, total float64
	for i := len(ts) - 1; i >= 0; i-- {
		st := ep.steps[ts[i]]
		g = st.reward + a.gamma*g
		total += st.reward
		st.s.ret, st.s.epLen = g, len(ts)
		out[i] = st.s
	}
	return out, total
}

// releaseGroup gives every step of episode i the advantage
// (R_i - mean R) / (std R + ε): the episodes of one task seed are each
// other's baseline. A group whose returns are all equal teaches nothing
// and is dropped.
func releaseGroup(g *openGroup) []*sample {
	n := float64(len(g.returns))
	if n < 2 {
		return nil
	}
	var mean, sq float64
	for _, r := range g.returns {
		mean += r
	}
	mean /= n
	for _, r := range g.returns {
		sq += (r - mean) * (r - mean)
	}
	std := math.Sqrt(sq / n)
	if std < 1e-6 {
		return nil
	}
	var out []*sample
	for i, ep := range g.episodes {
		adv := (g.returns[i] - mean) / (std + 1e-6)
		for _, s := range ep {
			s.adv = adv
			out = append(out, s)
		}
	}
	return out
}

// expire forgets episodes without a transition for ttl (their actor died,
// or the joiner dropped the rest) and releases partial GRPO groups that
// waited as long. It returns the released samples and the number of
// episodes given up.
func (a *assembler) expire(now time.Time) (ready []*sample, dropped int) {
	for id, ep := range a.open {
		if now.Sub(ep.seen) > a.ttl {
			delete(a.open, id)
			dropped++
		}
	}
	for id, g := range a.groups {
		if now.Sub(g.seen) > a.ttl {
			delete(a.groups, id)
			ready = append(ready, a.release(g)...)
		}
	}
	return ready, dropped
}

// pending counts transitions held back.
func (a *assembler) pending() int {
	n := 0
	for _, ep := range a.open {
		n += len(ep.steps)
	}
	for _, g := range a.groups {
		for _, e := range g.episodes {
			n += len(e)
		}
	}
	return n
}
