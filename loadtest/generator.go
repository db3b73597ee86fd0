package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Config shapes the synthetic traffic.
type Config struct {
	// Events is the number of records to produce, duplicates and malformed
	// records included (approximately: whole episodes are produced).
	Events int
	// Rate caps records per second over all executors; 0 is unlimited.
	Rate float64
	// Executors run episodes concurrently, each on its own episodes.
	Executors int
	// Steps per episode; each step is an observation, an action and a
	// reward, and every episode ends with a terminal frame.
	Steps int
	// Reorder is the fraction of events held back behind 1 to 5 later
	// events of the same executor (so they arrive out of order within
	// their episode).
	Reorder float64
	// Duplicate is the fraction of events sent a second time, same bytes,
	// a few events later.
	Duplicate float64
	// Malformed is the fraction of events followed by a malformed record
	// (undecodable bytes or a message without an event id) on the same
	// topic and key.
	Malformed float64
	// FrameBytes is the size of each observation's frame (random bytes:
	// incompressible, like the JPEG frames actors send).
	FrameBytes int
	// Frame, when set, is every observation's frame instead of FrameBytes
	// random bytes: a real image, which a learner decodes (asyncwebrl
	// drill runs one for its learner fault).
	Frame []byte
	// Seed makes the spoiling reproducible (ids and times are not).
	Seed uint64
	// Progress, when set, is called from time to time with the records
	// sent so far and the total planned.
	Progress func(sent, total int)
	// Stop, when set and closed, ends the load early: each executor
	// finishes the episode it is playing and sends what it holds back, so
	// the Expected outcome is still whole (asyncwebrl drill runs its load
	// until its faults have recovered).
	Stop <-chan struct{}
}

// RealFrameBytes is the size of an actor's frame, bench joiner's default: the median of 8,791 policy
// observations recorded in ClickHouse (obs.frame_bytes: 2,960; mean 2,910,
// 90th percentile 4,423), JPEG quality 80 at the default 128-pixel longer
// side (services/actor WithFrameMaxSide, WithJPEGQuality).
const RealFrameBytes = 3000

// DefaultConfig is the acceptance mix: 10% reordered, 5% duplicated, 1%
// malformed, 8 executors, 8 steps, 256-byte frames (small: the tests' cost
// is per record; bench joiner sets RealFrameBytes), unlimited rate.
func DefaultConfig(events int) Config {
	return Config{Events: events, Executors: 8, Steps: 8, Reorder: 0.10, Duplicate: 0.05, Malformed: 0.01, FrameBytes: 256, Seed: 1}
}

// StepKey names one transition.
type StepKey struct {
	Episode string
	Step    uint32
}

// StepIDs are what a transition must be made of: the event ids of its
// state, action and next state (empty for the terminal step) and the reward
// (a transition carries the reward's value, not its event).
type StepIDs struct {
	Obs, Action, Next string
	Reward            float64
	Done              bool
}

// EpisodeWant is what an episode's summary must say.
type EpisodeWant struct {
	TaskID  string
	Length  uint32
	Return  float64
	Success bool
	Aborted bool
}

// Malformed is one malformed record as it landed.
type Malformed struct {
	Topic     string
	Partition int32
	Offset    int64
	Payload   []byte
}

// Landed is where the broker put an acknowledged record.
type Landed struct {
	Partition int32
	Offset    int64
}

// Expected is the outcome the joiner must produce from what was sent.
type Expected struct {
	Transitions map[StepKey]StepIDs
	Episodes    map[string]EpisodeWant
	Malformed   []Malformed
	// Acked is every record the broker acknowledged, by topic (its full
	// name): each must be in the log at that place, and nothing else
	// (VerifyInputs).
	Acked map[string][]Landed
	// Cut are the episodes whose tails a killed producer cut
	// (ExpectTraffic): none may have a terminal transition.
	Cut map[string]bool
	// Records, by what they were.
	Records, Events, Duplicates, Reordered int
}

// Generate produces the traffic to cat's input topics with cl and returns
// what the joiner must make of it once every record is acknowledged.
func Generate(ctx context.Context, cl *kgo.Client, cat *topics.Catalog, c Config) (*Expected, error) {
	if c.Executors < 1 || c.Steps < 1 || c.Events < 1 {
		return nil, fmt.Errorf("invalid load: %d events, %d executors, %d steps", c.Events, c.Executors, c.Steps)
	}
	perEpisode := 3*c.Steps + 1
	spoil := 1 + c.Duplicate + c.Malformed
	episodes := max(1, int(float64(c.Events)/spoil/float64(perEpisode)+0.5))
	total := int(float64(episodes*perEpisode) * spoil)

	var run [4]byte
	_, _ = rand.Read(run[:])
	g := &generator{
		cl:      cl,
		c:       c,
		run:     hex.EncodeToString(run[:]),
		obs:     cat.Name(topics.Obs),
		actions: cat.Name(topics.Actions),
		rewards: cat.Name(topics.Rewards),
		exp:     &Expected{Transitions: map[StepKey]StepIDs{}, Episodes: map[string]EpisodeWant{}, Acked: map[string][]Landed{}},
		total:   total,
		start:   time.Now(),
	}
	var wg sync.WaitGroup
	for e := range c.Executors {
		n := episodes / c.Executors
		if e < episodes%c.Executors {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.executor(ctx, e, n)
		}()
	}
	wg.Wait()
	if err := cl.Flush(ctx); err != nil {
		return nil, fmt.Errorf("unable to flush the load: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return nil, g.err
	}
	return g.exp, nil
}

type generator struct {
	cl                    *kgo.Client
	c                     Config
	run                   string
	obs, actions, rewards string
	total                 int
	start                 time.Time
	sent                  atomic.Int64

	mu  sync.Mutex
	exp *Expected
	err error
}

// outgoing is a record waiting in an executor's send queue.
type outgoing struct {
	rec       *kgo.Record
	after     int // sent once this many later records went
	malformed bool
}

func (g *generator) executor(ctx context.Context, e, episodes int) {
	rng := mrand.New(mrand.NewPCG(g.c.Seed, uint64(e)))
	frame := make([]byte, g.c.FrameBytes)
	if g.c.Frame != nil {
		frame = g.c.Frame
	}
	var held []*outgoing
	send := func(o *outgoing) {
		g.pace(ctx)
		g.cl.Produce(ctx, o.rec, func(r *kgo.Record, err error) {
			g.mu.Lock()
			defer g.mu.Unlock()
			if err != nil {
				g.setErr(err)
				return
			}
			if o.malformed {
				g.exp.Malformed = append(g.exp.Malformed, Malformed{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Payload: r.Value})
			}
			g.exp.Acked[r.Topic] = append(g.exp.Acked[r.Topic], Landed{r.Partition, r.Offset})
		})
	}
	// emit queues one event and sends whatever is due, so that held-back
	// events and duplicates go out a few events later.
	emit := func(topic, key string, msg eventspb.Event) {
		if ctx.Err() != nil {
			return
		}
		b, err := eventspb.Marshal(msg)
		if err != nil {
			g.mu.Lock()
			g.setErr(err)
			g.mu.Unlock()
			return
		}
		var now []*outgoing
		o := &outgoing{rec: &kgo.Record{Topic: topic, Key: []byte(key), Value: b}}
		g.mu.Lock()
		g.exp.Records++
		g.exp.Events++
		if rng.Float64() < g.c.Reorder {
			o.after = 1 + rng.IntN(5)
			g.exp.Reordered++
		}
		if rng.Float64() < g.c.Duplicate {
			held = append(held, &outgoing{rec: &kgo.Record{Topic: topic, Key: []byte(key), Value: b}, after: 1 + rng.IntN(8)})
			g.exp.Records++
			g.exp.Duplicates++
		}
		if rng.Float64() < g.c.Malformed {
			held = append(held, &outgoing{rec: &kgo.Record{Topic: topic, Key: []byte(key), Value: malformed(rng, msg)}, malformed: true})
			g.exp.Records++
		}
		g.mu.Unlock()
		if o.after > 0 {
			held = append(held, o)
		} else {
			now = append(now, o)
		}
		for _, o := range now {
			send(o)
			var keep []*outgoing
			for _, h := range held {
				if h.after--; h.after <= 0 {
					send(h)
				} else {
					keep = append(keep, h)
				}
			}
			held = keep
		}
	}
	for n := range episodes {
		g.episode(rng, e, n, frame, emit)
		if ctx.Err() != nil {
			return
		}
		if g.stopped() {
			break
		}
	}
	for _, h := range held {
		send(h)
	}
}

// episode plays one episode as an actor would publish it.
func (g *generator) episode(rng *mrand.Rand, e, n int, frame []byte, emit func(topic, key string, msg eventspb.Event)) {
	ep := fmt.Sprintf("%s-x%d-%06d", g.run, e, n)
	task := &eventspb.TaskRef{
		TaskId: fmt.Sprintf("synthetic/click/seed-%d", (e*7919+n)%97), Site: "synthetic", Family: "click",
		Seed: int64(n), Tier: eventspb.Tier_TIER_EASY, Split: eventspb.Split_SPLIT_TRAIN, GroupId: fmt.Sprintf("g-%d", (e*7919+n)%97),
	}
	env := func(step int) *eventspb.Envelope {
		env := eventspb.NewEnvelope(fmt.Sprintf("loadtest-%d", e))
		env.EpisodeId, env.Step, env.Source = ep, uint32(step), eventspb.Source_SOURCE_SYNTHETIC
		return env
	}
	var ret float64
	var prevObs string
	for s := 0; s <= g.c.Steps; s++ {
		if g.c.Frame == nil {
			fillRandom(rng, frame) // incompressible, like a JPEG
		}
		o := &eventspb.Observation{
			Envelope: env(s), Task: task, Frame: frame, FrameFormat: "jpeg", Width: 64, Height: 64,
			Url: "http://synthetic/" + ep, Stable: true, StabilityScore: syntheticScore(e, n, s), Terminal: s == g.c.Steps,
			Elements: []*eventspb.Element{{Bid: "b1", Role: "button", Text: "ok", Box: &eventspb.Box{X: 1, Y: 2, W: 30, H: 10}}},
			Timings:  &eventspb.ObservationTimings{ObserveMs: 3, SettleMs: 20},
		}
		emit(g.obs, ep, o)
		if s > 0 {
			g.mu.Lock()
			k := StepKey{ep, uint32(s - 1)}
			ids := g.exp.Transitions[k]
			if s < g.c.Steps {
				ids.Next = o.Envelope.EventId
			}
			g.exp.Transitions[k] = ids
			g.mu.Unlock()
		}
		if s == g.c.Steps {
			break // the terminal frame: no action follows
		}
		prevObs = o.Envelope.EventId
		a := &eventspb.Action{
			Envelope: env(s), Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: "b1", ObsEventId: prevObs,
			LogProb: -rng.Float64(), Value: rng.Float64(), PolicyName: "synthetic", PolicyVersion: 1,
			InferenceLatencyUs: 800, BatchSize: 4, Raw: `click("b1")`,
		}
		emit(g.actions, ep, a)
		last := s == g.c.Steps-1
		r := &eventspb.Reward{Envelope: env(s), Done: last, Success: last}
		if last {
			r.Reward, r.RawReward = 1, 1
		}
		ret += r.Reward
		emit(g.rewards, ep, r)
		g.mu.Lock()
		g.exp.Transitions[StepKey{ep, uint32(s)}] = StepIDs{Obs: prevObs, Action: a.Envelope.EventId, Reward: r.Reward, Done: r.Done}
		g.mu.Unlock()
	}
	g.mu.Lock()
	g.exp.Episodes[ep] = EpisodeWant{TaskID: task.TaskId, Length: uint32(g.c.Steps), Return: ret, Success: true}
	g.mu.Unlock()
}

// malformed returns bytes that must end in the dlq: half undecodable, half
// a valid message of the topic's type without an event id.
func malformed(rng *mrand.Rand, like eventspb.Event) []byte {
	if rng.IntN(2) == 0 {
		b := make([]byte, 12)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		b[0] = 0x07 // field 0, wire type 7: invalid at the first byte
		return b
	}
	env := &eventspb.Envelope{SchemaVersion: eventspb.SchemaVersion, EpisodeId: like.GetEnvelope().GetEpisodeId(), ProducedAtUnixNano: time.Now().UnixNano()}
	var b []byte
	switch like.(type) {
	case *eventspb.Observation:
		b, _ = marshalUnchecked(&eventspb.Observation{Envelope: env, Stable: true})
	case *eventspb.Action:
		b, _ = marshalUnchecked(&eventspb.Action{Envelope: env, Type: eventspb.ActionType_ACTION_TYPE_NOOP})
	default:
		b, _ = marshalUnchecked(&eventspb.Reward{Envelope: env})
	}
	return b
}

func fillRandom(rng *mrand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
}

// pace sleeps so that records go out at the configured rate.
func (g *generator) pace(ctx context.Context) {
	n := g.sent.Add(1)
	if p := g.c.Progress; p != nil && n%500 == 0 {
		p(int(n), g.total)
	}
	if g.c.Rate <= 0 {
		return
	}
	due := g.start.Add(time.Duration(float64(n) / g.c.Rate * float64(time.Second)))
	if d := time.Until(due); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}
}

// stopped reports whether Config.Stop is closed.
func (g *generator) stopped() bool {
	select {
	case <-g.c.Stop:
		return true
	default:
		return false
	}
}

func (g *generator) setErr(err error) {
	if g.err == nil {
		g.err = fmt.Errorf("unable to produce load: %w", err)
	}
}

// marshalUnchecked encodes without the codec's validation: the point is an
// invalid event.
func marshalUnchecked(m proto.Message) ([]byte, error) { return proto.Marshal(m) }

// syntheticScore spreads stability scores over [0.6, 0.96] without drawing
// from the generator's random stream (which decides reordering and
// duplicates): every frame is stable, but a replay with a stricter
// threshold finds some that are not.
func syntheticScore(executor, episode, step int) float64 {
	return 0.6 + 0.04*float64((executor*7+episode*3+step*13)%10)
}
