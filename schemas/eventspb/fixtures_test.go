package eventspb

import "google.golang.org/protobuf/proto"

// Valid events of every type, shared by the codec tests and the fuzz seeds.

func testEnvelope(episode string, step uint32) *Envelope {
	e := NewEnvelope("test-1")
	e.EpisodeId = episode
	e.Step = step
	e.Source = Source_SOURCE_POLICY
	return e
}

func testTask() *Task {
	e := testEnvelope("ep-1", 0)
	return &Task{
		Envelope: e, TaskId: "shop/checkout/seed-42", Site: "shop", Family: "checkout", Seed: 42,
		Tier: Tier_TIER_MEDIUM, Split: Split_SPLIT_TRAIN, GroupId: "g-7", GroupSize: 8,
		MaxSteps: 30, PolicyName: "main",
	}
}

func testTaskRef() *TaskRef {
	return &TaskRef{TaskId: "shop/checkout/seed-42", Site: "shop", Family: "checkout", Seed: 42,
		Tier: Tier_TIER_MEDIUM, Split: Split_SPLIT_TRAIN, GroupId: "g-7"}
}

func testObservation(step uint32) *Observation {
	return &Observation{
		Envelope: testEnvelope("ep-1", step), Task: testTaskRef(),
		Frame: []byte{0x89, 'P', 'N', 'G', 1, 2, 3}, FrameFormat: "png", Width: 160, Height: 120,
		FullFrameHash: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Url:           "http://127.0.0.1:8080/shop/checkout", Instruction: "Buy the red shoes",
		Elements: []*Element{
			{Bid: "a1", Role: "button", Text: "Buy", Box: &Box{X: 10, Y: 20, W: 30, H: 12}},
			{Bid: "a2", Role: "textbox", Text: "Name ✓", Box: &Box{X: 10, Y: 40, W: 80, H: 12}},
		},
		Stable: true, StabilityScore: 0.98,
		Timings: &ObservationTimings{ObserveMs: 12, SettleMs: 340},
	}
}

func testAction(step uint32) *Action {
	return &Action{
		Envelope: testEnvelope("ep-1", step), Type: ActionType_ACTION_TYPE_FILL, Bid: "a2", Text: "bob",
		TextToken: proto.Uint32(3), ObsEventId: "0190c1b2-0000-7000-8000-000000000000",
		LogProb: -1.25, Value: 0.4, PolicyName: "main", PolicyVersion: 17,
		InferenceLatencyUs: 2100, BatchSize: 4, Raw: `fill("a2", "bob")`,
	}
}

func testReward() *Reward {
	return &Reward{
		Envelope: testEnvelope("ep-1", 3), Reward: 1, RawReward: 1, DecayedReward: 0.75, Done: true, Success: true,
		FactsMet: []string{"item", "address"}, FactsTotal: 3, Reason: "2/3 facts",
	}
}

func testTelemetry() *Telemetry {
	return &Telemetry{
		Envelope: testEnvelope("", 0), ActorId: "actor-3", ExecutorId: "actor-3/2", Mode: "async",
		WindowStartUnixNano: 1e18, WindowEndUnixNano: 1e18 + 1e9,
		ObserveUs: 100, ThinkUs: 200, ActUs: 300, WaitUs: 400, IdleUs: 0, Steps: 5, Episodes: 1,
	}
}

func testTransition() *Transition {
	tr := &Transition{
		Envelope: testEnvelope("ep-1", 2), EpisodeId: "ep-1", Step: 2,
		Obs: testObservation(2), Action: testAction(2), Reward: 0.5,
		NextObsEventId: testObservation(3).GetEnvelope().GetEventId(), NextObsTopic: "obs", NextObsPartition: 4, NextObsOffset: 1234,
		LogProbOld: -1.25, PolicyVersion: 17, PolicyName: "main",
		GroupId: "g-7", TaskId: "shop/checkout/seed-42", Family: "checkout", Site: "shop", Tier: Tier_TIER_MEDIUM,
		Timings: &TransitionTimings{ObserveMs: 12, SettleMs: 340, InferenceLatencyUs: 2100, StepMs: 400, JoinMs: 20},
	}
	tr.Envelope.Source = Source_SOURCE_DEMO
	return tr
}

func testEpisode() *Episode {
	return &Episode{
		Envelope: testEnvelope("ep-1", 0), TaskId: "shop/checkout/seed-42", EpisodeId: "ep-1", GroupId: "g-7",
		Family: "checkout", Site: "shop", Tier: Tier_TIER_MEDIUM, Split: Split_SPLIT_TRAIN,
		TotalReturn: 1.5, Length: 4, Success: true, PolicyVersionsUsed: []uint64{16, 17}, DurationMs: 5300,
		PolicyName: "main",
	}
}

func testWeights() *Weights {
	return &Weights{
		Envelope: testEnvelope("", 0), PolicyName: "main", Version: 17, ParentVersion: 16,
		Onnx: []byte("onnx-graph-bytes"), Format: "onnx", Architecture: `{"input":[1,3,120,160]}`,
		Metrics: map[string]float64{"loss": 0.3, "kl": 0.01, "clip_frac": 0.1}, CreatedAtUnixNano: 1e18, Updates: 170,
	}
}

func testDeadLetter() *DeadLetter {
	return &DeadLetter{
		Envelope: testEnvelope("ep-1", 0), SourceTopic: "obs", SourcePartition: 3, SourceOffset: 1234,
		SourceKey: []byte("ep-1"), Payload: []byte{0xff, 0x00}, Reason: "unable to decode Observation: ...",
		ReasonCode: ReasonCode_REASON_CODE_DECODE_ERROR, Component: "joiner", MessageType: "asyncwebrl.v1.Observation",
	}
}

// testEvents returns one valid event of every top-level type.
func testEvents() []Event {
	return []Event{testTask(), testObservation(2), testAction(2), testReward(), testTelemetry(),
		testTransition(), testEpisode(), testWeights(), testDeadLetter()}
}

// decoders maps each event type name to its typed decoder, as consumers call it.
var decoders = map[string]func([]byte) (Event, error){
	"Task":        wrap(DecodeTask),
	"Observation": wrap(DecodeObservation),
	"Action":      wrap(DecodeAction),
	"Reward":      wrap(DecodeReward),
	"Telemetry":   wrap(DecodeTelemetry),
	"Transition":  wrap(DecodeTransition),
	"Episode":     wrap(DecodeEpisode),
	"Weights":     wrap(DecodeWeights),
	"DeadLetter":  wrap(DecodeDeadLetter),
}

func wrap[M Event](f func([]byte) (M, error)) func([]byte) (Event, error) {
	return func(b []byte) (Event, error) {
		m, err := f(b)
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}
