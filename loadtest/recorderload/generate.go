package recorderload

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// Event is one record to produce: its catalog topic, key and value.
type Event struct {
	Topic string // catalog name, e.g. topics.Actions
	Key   []byte
	Value []byte
}

// mix is the share of each topic in the generated traffic, in per mille;
// what is left after the fixed shares goes to actions.
var mix = []struct {
	topic    string
	perMille int
}{
	{topics.Rewards, 250},
	{topics.Telemetry, 250},
	{topics.Obs, 100},
	{topics.Episodes, 30},
	{topics.Transitions, 30},
	{topics.Tasks, 20},
	{topics.Weights, 1},
	{topics.DLQ, 1},
}

// badPerMillion is the rate of undecodable records (on the obs topic).
const badPerMillion = 100

// Generator yields n synthetic events in a fixed, seeded order.
type Generator struct {
	rng    *rand.Rand
	plan   []string // topic of each event, shuffled; "bad" for garbage
	next   int
	from   time.Time
	span   time.Duration
	counts map[string]int
	actors int
}

// NewGenerator plans n events whose produced-at times spread evenly over
// [from, from+span): the per-minute views get several minutes of data.
func NewGenerator(n int, seed uint64, from time.Time, span time.Duration) *Generator {
	g := &Generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), from: from, span: span,
		counts: map[string]int{}, actors: 16}
	left := n
	add := func(topic string, k int) {
		k = min(k, left)
		for i := 0; i < k; i++ {
			g.plan = append(g.plan, topic)
		}
		left -= k
		g.counts[topic] += k
	}
	add("bad", n*badPerMillion/1_000_000)
	for _, m := range mix {
		add(m.topic, max(n*m.perMille/1000, min(1, n/1000)))
	}
	add(topics.Actions, left)
	g.rng.Shuffle(len(g.plan), func(i, j int) { g.plan[i], g.plan[j] = g.plan[j], g.plan[i] })
	return g
}

// Len is the number of events the generator yields.
func (g *Generator) Len() int { return len(g.plan) }

// Expected returns the distinct rows each table must end with: one per event
// of its topic, and one per undecodable record in bad_records.
func (g *Generator) Expected() map[string]int {
	out := map[string]int{}
	for topic, n := range g.counts {
		if topic == "bad" {
			out[analytics.TableBadRecords] += n
			continue
		}
		out[analytics.EventTables[topic]] += n
	}
	return out
}

// Next returns the next event, or io.EOF after the last.
func (g *Generator) Next() (Event, error) {
	if g.next >= len(g.plan) {
		return Event{}, io.EOF
	}
	i := g.next
	g.next++
	topic := g.plan[i]
	at := g.from.Add(time.Duration(int64(g.span) * int64(i) / int64(len(g.plan))))
	actor := fmt.Sprintf("loadtest-actor-%d", g.rng.IntN(g.actors))
	episode := fmt.Sprintf("ep-%s-%d", actor, g.rng.IntN(1000))
	env := &eventspb.Envelope{
		EventId:            eventspb.NewEventID(),
		SchemaVersion:      eventspb.SchemaVersion,
		Producer:           actor,
		ProducedAtUnixNano: at.UnixNano(),
		EpisodeId:          episode,
		Step:               uint32(g.rng.IntN(20)),
		Source:             eventspb.Source_SOURCE_SYNTHETIC,
	}
	if topic == "bad" {
		garbage := make([]byte, 8+g.rng.IntN(24))
		for j := range garbage {
			garbage[j] = 0xff
		}
		return Event{Topic: topics.Obs, Key: []byte(episode), Value: garbage}, nil
	}
	tier := eventspb.Tier(1 + g.rng.IntN(3))
	family := [...]string{"click-button", "fill-form", "checkout", "search"}[g.rng.IntN(4)]
	var msg proto.Message
	key := episode
	switch topic {
	case topics.Actions:
		msg = &eventspb.Action{Envelope: env, Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: "b12",
			X: float32(g.rng.IntN(128)), Y: float32(g.rng.IntN(128)), LogProb: -g.rng.Float64(), Value: g.rng.Float64(),
			PolicyName: "pi", PolicyVersion: uint64(g.rng.IntN(4)), InferenceLatencyUs: uint64(500 + g.rng.IntN(4000)),
			BatchSize: uint32(1 + g.rng.IntN(16)), Raw: `click("b12")`}
	case topics.Rewards:
		done := g.rng.IntN(10) == 0
		msg = &eventspb.Reward{Envelope: env, Reward: g.rng.Float64(), RawReward: g.rng.Float64(), Done: done,
			Success: done && g.rng.IntN(2) == 0, FactsTotal: 2}
	case topics.Telemetry:
		env.EpisodeId = ""
		key = actor
		msg = &eventspb.Telemetry{Envelope: env, ActorId: actor, ExecutorId: fmt.Sprintf("e%d", g.rng.IntN(8)), Mode: "async",
			WindowStartUnixNano: at.Add(-10 * time.Second).UnixNano(), WindowEndUnixNano: at.UnixNano(),
			ObserveUs: uint64(g.rng.IntN(1e6)), ThinkUs: uint64(g.rng.IntN(1e6)), ActUs: uint64(g.rng.IntN(1e6)),
			WaitUs: uint64(g.rng.IntN(4e6)), IdleUs: uint64(g.rng.IntN(2e6)), Steps: uint32(g.rng.IntN(20))}
	case topics.Obs:
		frame := make([]byte, 64+g.rng.IntN(192))
		for j := range frame {
			frame[j] = byte(g.rng.Uint32())
		}
		msg = &eventspb.Observation{Envelope: env, Task: &eventspb.TaskRef{TaskId: family + "/seed-1", Family: family,
			Site: "site-" + family, Tier: tier, Split: eventspb.Split_SPLIT_TRAIN}, Frame: frame, FrameFormat: "png",
			Width: 128, Height: 128, Url: "http://127.0.0.1:18080/" + family, Stable: g.rng.IntN(4) > 0,
			StabilityScore: g.rng.Float64(), Timings: &eventspb.ObservationTimings{ObserveMs: uint32(g.rng.IntN(100))}}
	case topics.Episodes:
		length := uint32(1 + g.rng.IntN(30))
		key = family + "/seed-1"
		msg = &eventspb.Episode{Envelope: env, TaskId: key, EpisodeId: episode, Family: family, Site: "site-" + family,
			Tier: tier, Split: eventspb.Split_SPLIT_TRAIN, Length: length, Success: g.rng.IntN(3) > 0,
			PolicyVersionsUsed: []uint64{uint64(g.rng.IntN(4))}, PolicyName: "pi", DurationMs: uint64(length) * 900}
	case topics.Transitions:
		msg = &eventspb.Transition{Envelope: env, EpisodeId: episode, Step: env.Step,
			Obs:    &eventspb.Observation{Envelope: &eventspb.Envelope{EventId: eventspb.NewEventID(), SchemaVersion: 1}},
			Action: &eventspb.Action{Envelope: &eventspb.Envelope{EventId: eventspb.NewEventID(), SchemaVersion: 1}, Type: eventspb.ActionType_ACTION_TYPE_CLICK},
			Done:   true, Reward: g.rng.Float64(), PolicyName: "pi", PolicyVersion: uint64(g.rng.IntN(4)), Family: family, Tier: tier}
	case topics.Tasks:
		env.EpisodeId = ""
		key = family + "/seed-1"
		msg = &eventspb.Task{Envelope: env, TaskId: key, Family: family, Site: "site-" + family, Seed: int64(g.rng.IntN(1000)),
			Tier: tier, Split: eventspb.Split_SPLIT_TRAIN, MaxSteps: 30, PolicyName: "pi"}
	case topics.Weights:
		env.EpisodeId = ""
		key = "pi"
		msg = &eventspb.Weights{Envelope: env, PolicyName: "pi", Version: uint64(i), Onnx: []byte("onnx-graph"), Format: "onnx",
			CreatedAtUnixNano: at.UnixNano(), Metrics: map[string]float64{"loss": g.rng.Float64()}}
	case topics.DLQ:
		key = topics.Actions
		msg = &eventspb.DeadLetter{Envelope: env, SourceTopic: topics.Actions, SourceOffset: int64(i), Payload: []byte("x"),
			Reason: "synthetic", ReasonCode: eventspb.ReasonCode_REASON_CODE_JOIN_TIMEOUT, Component: "loadtest"}
	}
	b, err := eventspb.Marshal(msg)
	if err != nil {
		return Event{}, fmt.Errorf("unable to generate a %s event: %w", topic, err)
	}
	return Event{Topic: topic, Key: []byte(key), Value: b}, nil
}
