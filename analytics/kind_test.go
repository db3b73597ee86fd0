package analytics

import (
	"testing"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// TestKinds is the rule of kind.go, case by case: the flags an event
// carries win, a demonstration is one whichever field says so, and an
// event that only knows its split is greedy on the held-out split.
func TestKinds(t *testing.T) {
	env := func(s eventspb.Source) *eventspb.Envelope { return &eventspb.Envelope{Source: s} }
	policy, demo := eventspb.Source_SOURCE_POLICY, eventspb.Source_SOURCE_DEMO
	train, test := eventspb.Split_SPLIT_TRAIN, eventspb.Split_SPLIT_TEST
	ref := func(s eventspb.Split) *eventspb.TaskRef { return &eventspb.TaskRef{Split: s} }
	cases := []struct {
		name string
		got  Kind
		want Kind
	}{
		{"task sampled", TaskKind(&eventspb.Task{Envelope: env(policy), Split: train}), KindSample},
		{"task greedy", TaskKind(&eventspb.Task{Envelope: env(policy), Split: test, Greedy: true}), KindGreedy},
		// A task says how it is acted: a sampled held-out task is a sample.
		{"task sampled on test", TaskKind(&eventspb.Task{Envelope: env(policy), Split: test}), KindSample},
		{"task demo", TaskKind(&eventspb.Task{Envelope: env(policy), Demo: true, PolicyName: "oracle"}), KindDemo},
		{"task oracle", TaskKind(&eventspb.Task{Envelope: env(policy), PolicyName: "oracle"}), KindDemo},
		{"action sampled", ActionKind(&eventspb.Action{Envelope: env(policy), PolicyName: "pi"}), KindSample},
		{"action greedy", ActionKind(&eventspb.Action{Envelope: env(policy), PolicyName: "pi", Greedy: true}), KindGreedy},
		{"action demo", ActionKind(&eventspb.Action{Envelope: env(demo), PolicyName: "oracle"}), KindDemo},
		{"obs train", ObservationKind(&eventspb.Observation{Envelope: env(policy), Task: ref(train)}), KindSample},
		{"obs test", ObservationKind(&eventspb.Observation{Envelope: env(policy), Task: ref(test)}), KindGreedy},
		{"obs demo", ObservationKind(&eventspb.Observation{Envelope: env(demo), Task: ref(train)}), KindDemo},
		{"obs without task", ObservationKind(&eventspb.Observation{Envelope: env(policy)}), KindUnspecified},
		{"transition sampled", TransitionKind(&eventspb.Transition{Envelope: env(policy),
			Obs: &eventspb.Observation{Task: ref(train)}, Action: &eventspb.Action{Envelope: env(policy)}}), KindSample},
		{"transition greedy by action", TransitionKind(&eventspb.Transition{Envelope: env(policy),
			Obs: &eventspb.Observation{Task: ref(train)}, Action: &eventspb.Action{Envelope: env(policy), Greedy: true}}), KindGreedy},
		{"transition demo", TransitionKind(&eventspb.Transition{Envelope: env(demo), PolicyName: "oracle",
			Obs: &eventspb.Observation{Task: ref(train)}, Action: &eventspb.Action{Envelope: env(demo)}}), KindDemo},
		{"episode train", EpisodeKind(&eventspb.Episode{Envelope: env(policy), Split: train, PolicyName: "pi"}), KindSample},
		{"episode held out", EpisodeKind(&eventspb.Episode{Envelope: env(policy), Split: test, PolicyName: "pi"}), KindGreedy},
		// The joiner names the episode's policy after its first action: a
		// demonstration is "oracle" even when its terminal reward said policy.
		{"episode oracle", EpisodeKind(&eventspb.Episode{Envelope: env(policy), Split: train, PolicyName: "oracle"}), KindDemo},
		{"episode demo source", EpisodeKind(&eventspb.Episode{Envelope: env(demo), Split: train}), KindDemo},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: kind %s, want %s", c.name, c.got, c.want)
		}
	}
}
