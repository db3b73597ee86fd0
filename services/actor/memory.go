package actor

import (
	"slices"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// DefaultMemorySteps is how many past steps an observation remembers
// (Observation.memory) unless WithMemorySteps says otherwise.
const DefaultMemorySteps = 4

// memoryPages bounds the earlier pages whose text a memory carries, and
// maxPageLines the lines of each (the current page's page_text too).
const (
	memoryPages  = 2
	maxPageLines = 32
	maxLineBytes = 80
)

// Memory is an episode's memory as the policy sees it (Observation.memory):
// its last k steps, each with the text of the page it was taken on. The
// actor's executors and the expressiveness audit keep one per episode, so
// that both show the policy the same state. Not safe for concurrent use.
type Memory struct {
	k     int
	steps []remembered // oldest first, at most k
}

// remembered is one past step and the text of its page.
type remembered struct {
	step *eventspb.PastStep // page_text unset
	text []string
}

// NewMemory returns the memory of a new episode keeping k steps (k <= 0:
// none).
func NewMemory(k int) *Memory { return &Memory{k: max(k, 0)} }

// Remember records step t: action a, taken on the page of obs, and its
// reward.
func (m *Memory) Remember(t uint32, a *eventspb.Action, obs *eventspb.Observation, reward float64) {
	if m == nil || m.k == 0 || a == nil {
		return
	}
	st := &eventspb.PastStep{
		Step:   t,
		Type:   a.GetType(),
		Text:   clip(a.GetText(), maxText),
		Url:    obs.GetUrl(),
		Reward: float32(finite(reward)),
	}
	for _, el := range obs.GetElements() {
		if a.GetBid() != "" && el.GetBid() == a.GetBid() {
			st.TargetText = clip(el.GetText(), maxText)
			break
		}
	}
	m.steps = append(m.steps, remembered{step: st, text: pageLines(obs)})
	if len(m.steps) > m.k {
		m.steps = slices.Delete(m.steps, 0, len(m.steps)-m.k)
	}
}

// Recall sets ev.memory: the remembered steps, newest first, the newest
// step of each page at another URL than ev's (and than every newer step's)
// carrying that page's text, for at most memoryPages pages.
func (m *Memory) Recall(ev *eventspb.Observation) {
	if m == nil || len(m.steps) == 0 {
		return
	}
	seen := map[string]bool{ev.GetUrl(): true}
	pages := 0
	ev.Memory = make([]*eventspb.PastStep, 0, len(m.steps))
	for i := len(m.steps) - 1; i >= 0; i-- {
		r := m.steps[i]
		st := &eventspb.PastStep{
			Step: r.step.GetStep(), Type: r.step.GetType(), TargetText: r.step.GetTargetText(),
			Text: r.step.GetText(), Url: r.step.GetUrl(), Reward: r.step.GetReward(),
		}
		if u := st.GetUrl(); !seen[u] {
			seen[u] = true
			if pages < memoryPages && len(r.text) > 0 {
				st.PageText = r.text
				pages++
			}
		}
		ev.Memory = append(ev.Memory, st)
	}
}

// pageLines is the text a page leaves in memory: its page_text, then its
// elements' values (what was typed is in no line of text), deduplicated, at
// most maxPageLines lines.
func pageLines(obs *eventspb.Observation) []string {
	out := slices.Clone(obs.GetPageText())
	for _, el := range obs.GetElements() {
		if v := el.GetValue(); v != "" && len(out) < maxPageLines && !slices.Contains(out, v) {
			out = append(out, clip(v, maxLineBytes))
		}
	}
	return out[:min(len(out), maxPageLines)]
}
