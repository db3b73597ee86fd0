package loadtest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Traffic is what ExpectTraffic read from the input topics of traffic that
// nobody recorded as it was sent (real actors): the topics are then the
// only reference, and what the joiner must make of them is derived from
// them with the joiner's rules.
type Traffic struct {
	// Records and Events per input topic (its short name): records read
	// committed, and distinct event ids among them. A record whose event id
	// was already read is a duplicate write (a producer retry written
	// twice, or an actor that published an event again).
	Records, Events map[string]int
	// Undecodable records per input topic (each must be a dead letter).
	Undecodable map[string]int
	// Episodes by how they ended: finished (a done reward, not aborted),
	// aborted (the actor gave up: a dead browser, a stop), unfinished (no
	// done reward: the actor died with it).
	Episodes, Finished, Aborted, Unfinished int
	// Gaps are acknowledged data missing, as "topic episode/step": a step's
	// event absent while its topic holds a later event of the episode (an
	// episode's events of one topic share a key, so a partition, and an
	// idempotent producer's records land in the order sent: a hole there
	// is a record the broker acknowledged and lost), or absent from an
	// episode whose producer was not killed (it flushed). A loss.
	Gaps []string
	// Cut are the in-flight tail of a killed producer, as "topic
	// episode/step": events of an episode of a producer killed with
	// SIGKILL, absent while their topic holds nothing later of the
	// episode. Sent, perhaps, but never acknowledged: the batch died with
	// the process, while the episode's other topics (other partitions)
	// had theirs acknowledged. Not a loss. CutEpisodes are their episodes:
	// each must end unfinished or aborted for training (no terminal
	// transition: the learner trains an episode only once it ended), which
	// Verify checks (Report.CutTerminal).
	Cut         []string
	CutEpisodes int
	// Killed are the producers whose tails may be cut (instance ids).
	Killed []string
	// DeadLettered are the steps whose events the joiner dead-lettered
	// (their transitions are not expected: the dead letter accounts for
	// them), and Reasons counts those dead letters by reason code.
	DeadLettered int
	Reasons      map[string]int
}

// Verdicts are the input topics: the distinct events each holds (expected
// and found alike: the topics are the reference), the steps missing inside
// episodes (lost) and the repeated event ids (duplicated).
func (t Traffic) Verdicts() []Verdict {
	var out []Verdict
	byTopic := func(keys []string) map[string]int {
		n := map[string]int{}
		for _, k := range keys {
			topic, _, _ := strings.Cut(k, " ")
			n[topic]++
		}
		return n
	}
	gaps, cut := byTopic(t.Gaps), byTopic(t.Cut)
	for _, topic := range []string{topics.Obs, topics.Actions, topics.Rewards} {
		out = append(out, Verdict{Name: topic, Expected: t.Events[topic] + gaps[topic], Found: t.Events[topic],
			Lost: gaps[topic], Duplicated: t.Records[topic] - t.Events[topic] - t.Undecodable[topic], Cut: cut[topic]})
	}
	return out
}

// killedBy reports whether producer (an instance id, or one of its
// executors: "<instance>/executor-3") belongs to a killed instance.
func (t Traffic) killedBy(producer string) bool {
	for _, k := range t.Killed {
		if producer == k || strings.HasPrefix(producer, k+"/") {
			return true
		}
	}
	return false
}

func (t Traffic) String() string {
	var reasons []string
	for r, n := range t.Reasons {
		reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
	}
	sort.Strings(reasons)
	s := fmt.Sprintf("episodes: %d (%d finished, %d aborted, %d unfinished); steps dead-lettered by the joiner: %d",
		t.Episodes, t.Finished, t.Aborted, t.Unfinished, t.DeadLettered)
	if len(reasons) > 0 {
		s += " (" + strings.Join(reasons, ", ") + ")"
	}
	if len(t.Killed) > 0 {
		s += fmt.Sprintf("; cut by the actor's kill: %d events of %d episodes", len(t.Cut), t.CutEpisodes)
	}
	return s
}

// inEvent is one input event as ExpectTraffic keeps it.
type inEvent struct {
	id, ref string // ref: the state an action names
	at      coord
	payload []byte
	task    *eventspb.TaskRef
	reward  float64
	// done, success, truncated, aborted: a reward's flags.
	done, success, truncated, aborted bool
}

// inStep is one step of an episode: its events in log order.
type inStep struct{ obs, acts, rews []*inEvent }

// ExpectTraffic reads cat's input topics (read committed) and the joiner's
// dead letters, and returns what the joiner must have made of the inputs,
// for Verify: a transition for every step whose action and reward are
// there (and not aborted), whose state is there, and whose next state is
// there unless the step ended the episode; an episode summary for every
// episode with a done reward and a known task; every dead letter of an
// input record as an expected one. It follows the joiner's own rules (the
// first action and reward of a step, the state the action names, the
// first next state in log order) but not its time windows: a step the
// joiner gave up on within its window is in its dead letters, and is
// accounted for there (Traffic.DeadLettered and Reasons say how many and
// why, for the reader to judge).
//
// killed are the instance ids of producers killed with SIGKILL during the
// traffic: their episodes' in-flight tails are counted as cut
// (Traffic.Cut), not lost.
func ExpectTraffic(ctx context.Context, newClient joiner.ClientFunc, cat *topics.Catalog, killed []string) (*Expected, Traffic, error) {
	tr := Traffic{Records: map[string]int{}, Events: map[string]int{}, Undecodable: map[string]int{}, Reasons: map[string]int{},
		Killed: killed}
	exp := &Expected{Transitions: map[StepKey]StepIDs{}, Episodes: map[string]EpisodeWant{}, Acked: map[string][]Landed{},
		Cut: map[string]bool{}}
	eps := map[string]map[uint32]*inStep{}
	producers := map[string]string{} // episode id → its producer
	at := map[coord]StepKey{}
	undecodable := map[coord][]byte{}
	seen := map[string]bool{}
	step := func(ep string, t uint32) *inStep {
		if eps[ep] == nil {
			eps[ep] = map[uint32]*inStep{}
		}
		if eps[ep][t] == nil {
			eps[ep][t] = &inStep{}
		}
		return eps[ep][t]
	}
	for _, topic := range []string{topics.Obs, topics.Actions, topics.Rewards} {
		name := cat.Name(topic)
		err := joiner.ReadCommitted(ctx, newClient, name, nil, func(r *kgo.Record) error {
			tr.Records[topic]++
			exp.Acked[name] = append(exp.Acked[name], Landed{r.Partition, r.Offset})
			c := coord{r.Topic, r.Partition, r.Offset}
			e := &inEvent{at: c, payload: r.Value}
			var env *eventspb.Envelope
			switch topic {
			case topics.Obs:
				o, err := eventspb.DecodeObservation(r.Value)
				if err != nil {
					break
				}
				env, e.task = o.GetEnvelope(), o.GetTask()
			case topics.Actions:
				a, err := eventspb.DecodeAction(r.Value)
				if err != nil {
					break
				}
				env, e.ref = a.GetEnvelope(), a.GetObsEventId()
			case topics.Rewards:
				rw, err := eventspb.DecodeReward(r.Value)
				if err != nil {
					break
				}
				env = rw.GetEnvelope()
				e.reward, e.done, e.success, e.truncated, e.aborted = rw.GetReward(), rw.GetDone(), rw.GetSuccess(), rw.GetTruncated(), rw.GetAborted()
			}
			if env == nil {
				tr.Undecodable[topic]++
				undecodable[c] = r.Value
				return nil
			}
			e.id = env.GetEventId()
			if seen[e.id] {
				return nil // a repeated event: the joiner keeps the first
			}
			seen[e.id] = true
			tr.Events[topic]++
			k := StepKey{env.GetEpisodeId(), env.GetStep()}
			if _, ok := producers[k.Episode]; !ok {
				producers[k.Episode] = env.GetProducer()
			}
			at[c] = k
			st := step(k.Episode, k.Step)
			switch topic {
			case topics.Obs:
				st.obs = append(st.obs, e)
			case topics.Actions:
				st.acts = append(st.acts, e)
			case topics.Rewards:
				st.rews = append(st.rews, e)
			}
			return nil
		})
		if err != nil {
			return nil, tr, fmt.Errorf("unable to read %s: %w", name, err)
		}
	}

	// The joiner's dead letters of input records: expected, and their
	// steps accounted for.
	dead := map[StepKey]bool{}
	err := joiner.ReadCommitted(ctx, newClient, cat.Name(topics.DLQ), nil, func(r *kgo.Record) error {
		dl, err := eventspb.DecodeDeadLetter(r.Value)
		if err != nil {
			return nil // Verify counts it
		}
		c := coord{dl.GetSourceTopic(), dl.GetSourcePartition(), dl.GetSourceOffset()}
		if b, ok := undecodable[c]; ok {
			exp.Malformed = append(exp.Malformed, Malformed{c.topic, c.partition, c.offset, b})
			delete(undecodable, c)
			tr.Reasons[dl.GetReasonCode().String()]++
			return nil
		}
		k, ok := at[c]
		if !ok {
			return nil // not an input event's: Verify counts it
		}
		exp.Malformed = append(exp.Malformed, Malformed{c.topic, c.partition, c.offset, dl.GetPayload()})
		tr.Reasons[dl.GetReasonCode().String()]++
		if !dead[k] {
			dead[k] = true
			tr.DeadLettered++
		}
		return nil
	})
	if err != nil {
		return nil, tr, fmt.Errorf("unable to read %s: %w", cat.Name(topics.DLQ), err)
	}
	// An undecodable record no dead letter names must still become one.
	for c, b := range undecodable {
		exp.Malformed = append(exp.Malformed, Malformed{c.topic, c.partition, c.offset, b})
	}

	for id, steps := range eps {
		expectEpisode(exp, &tr, id, steps, dead, tr.killedBy(producers[id]))
	}
	exp.Events = tr.Events[topics.Obs] + tr.Events[topics.Actions] + tr.Events[topics.Rewards]
	exp.Records = tr.Records[topics.Obs] + tr.Records[topics.Actions] + tr.Records[topics.Rewards]
	exp.Duplicates = exp.Records - exp.Events - tr.Undecodable[topics.Obs] - tr.Undecodable[topics.Actions] - tr.Undecodable[topics.Rewards]
	slices.Sort(tr.Gaps)
	slices.Sort(tr.Cut)
	return exp, tr, nil
}

// expectEpisode adds what the joiner must make of one episode's steps;
// killed: its producer was killed, so its tail may be cut.
func expectEpisode(exp *Expected, tr *Traffic, id string, steps map[uint32]*inStep, dead map[StepKey]bool, killed bool) {
	tr.Episodes++
	first := func(es []*inEvent) *inEvent {
		if len(es) == 0 {
			return nil
		}
		return es[0]
	}
	var maxStep uint32
	doneAt, abortAt := int64(-1), int64(-1)
	// The last step each topic holds an event of (-1: none).
	lastOf := map[string]int64{topics.Obs: -1, topics.Actions: -1, topics.Rewards: -1}
	for t, st := range steps {
		maxStep = max(maxStep, t)
		for topic, es := range map[string][]*inEvent{topics.Obs: st.obs, topics.Actions: st.acts, topics.Rewards: st.rews} {
			if len(es) > 0 {
				lastOf[topic] = max(lastOf[topic], int64(t))
			}
		}
		if r := first(st.rews); r != nil {
			if r.done && (doneAt < 0 || int64(t) < doneAt) {
				doneAt = int64(t)
			}
			if r.aborted && (abortAt < 0 || int64(t) < abortAt) {
				abortAt = int64(t)
			}
		}
	}
	switch {
	case doneAt < 0:
		tr.Unfinished++
	case abortAt >= 0:
		tr.Aborted++
	default:
		tr.Finished++
	}
	// Missing: a step before the episode's last one (its end, or the last
	// step seen) without its obs, action or reward. Of a killed producer,
	// an event after which its topic holds nothing of the episode is its
	// cut tail; every other one is a gap (lost).
	last := int64(maxStep)
	if doneAt >= 0 {
		last = doneAt
	}
	cut := false
	missing := func(topic string, t int64) {
		key := fmt.Sprintf("%s %s/%d", topic, id, t)
		if killed && t > lastOf[topic] {
			tr.Cut = append(tr.Cut, key)
			cut = true
			return
		}
		tr.Gaps = append(tr.Gaps, key)
	}
	for t := int64(0); t <= last; t++ {
		st := steps[uint32(t)]
		if st == nil {
			st = &inStep{}
		}
		ended := abortAt >= 0 && t >= abortAt // the aborted step may lack any of them
		if len(st.obs) == 0 && !ended {
			missing(topics.Obs, t)
		}
		if t < last || doneAt >= 0 {
			if len(st.acts) == 0 && !ended {
				missing(topics.Actions, t)
			}
			if len(st.rews) == 0 {
				missing(topics.Rewards, t)
			}
		}
	}
	if cut {
		tr.CutEpisodes++
		exp.Cut[id] = true
	}

	var task *eventspb.TaskRef
	var ret float64
	for t := uint32(0); t <= maxStep; t++ {
		st := steps[t]
		if st == nil {
			continue
		}
		for _, o := range st.obs {
			if task == nil && o.task != nil {
				task = o.task
			}
		}
		if doneAt >= 0 && int64(t) > doneAt {
			continue
		}
		r := first(st.rews)
		if r != nil {
			ret += r.reward
		}
		a := first(st.acts)
		k := StepKey{id, t}
		if a == nil || r == nil || r.aborted || (abortAt >= 0 && int64(t) >= abortAt) || dead[k] {
			continue
		}
		var s *inEvent
		for _, o := range st.obs {
			if a.ref == "" || o.id == a.ref {
				s = o
				break
			}
		}
		if s == nil {
			continue
		}
		want := StepIDs{Obs: s.id, Action: a.id, Reward: r.reward, Done: r.done}
		if !r.done || r.truncated {
			if next := steps[t+1]; next != nil && len(next.obs) > 0 {
				want.Next = next.obs[0].id
			} else if !r.done {
				continue // no next state: the step cannot join
			}
		}
		exp.Transitions[k] = want
	}
	if doneAt >= 0 && task.GetTaskId() != "" {
		done := first(steps[uint32(doneAt)].rews)
		exp.Episodes[id] = EpisodeWant{TaskID: task.GetTaskId(), Length: uint32(doneAt) + 1, Return: ret,
			Success: done.success, Aborted: done.aborted}
	}
}
