package analytics

import "github.com/asyncwebrl/asyncwebrl/schemas/eventspb"

// Kind is what an episode was for, the Enum8 of the kind columns
// (migrations/0007_runs_and_kinds.sql): a training episode with sampled
// actions, a greedy held-out evaluation, or a demonstration. Success
// reported for the policy is never a demonstration's.
type Kind int8

// The kind column's values (its Enum8 numbers).
const (
	KindUnspecified Kind = 0
	KindSample      Kind = 1
	KindGreedy      Kind = 2
	KindDemo        Kind = 3
)

// Kinds are the kind column's values in Enum8 order.
var Kinds = []Kind{KindUnspecified, KindSample, KindGreedy, KindDemo}

// String is the value's name in the column (and in query output).
func (k Kind) String() string {
	switch k {
	case KindSample:
		return "sample"
	case KindGreedy:
		return "greedy"
	case KindDemo:
		return "demo"
	}
	return "unspecified"
}

// DemoPolicyName is the policy name of webenv's scripted solutions, which
// the actor publishes demonstrations under (actor.DemoPolicyName).
const DemoPolicyName = "oracle"

// isDemo reports a demonstration's event: its source says so, or it names
// the scripted solver as its policy.
func isDemo(source eventspb.Source, policyName string) bool {
	return source == eventspb.Source_SOURCE_DEMO || policyName == DemoPolicyName
}

// kindBySplit is the kind of an event that says its split but not how it
// was acted: held-out episodes are the greedy evaluations (the curriculum
// and `replay eval` act greedily on the test split and sample on the train
// split, and the learner never trains on held-out ones).
func kindBySplit(demo bool, split eventspb.Split) Kind {
	switch {
	case demo:
		return KindDemo
	case split == eventspb.Split_SPLIT_TEST:
		return KindGreedy
	case split == eventspb.Split_SPLIT_TRAIN:
		return KindSample
	}
	return KindUnspecified
}

// kindByFlag is the kind of an event that says how it was acted.
func kindByFlag(demo, greedy bool) Kind {
	switch {
	case demo:
		return KindDemo
	case greedy:
		return KindGreedy
	}
	return KindSample
}

// TaskKind is an assignment's kind: Task.demo and Task.greedy.
func TaskKind(t *eventspb.Task) Kind {
	return kindByFlag(t.GetDemo() || isDemo(t.GetEnvelope().GetSource(), t.GetPolicyName()), t.GetGreedy())
}

// ActionKind is an action's: its source or policy name for a
// demonstration, else Action.greedy.
func ActionKind(a *eventspb.Action) Kind {
	return kindByFlag(isDemo(a.GetEnvelope().GetSource(), a.GetPolicyName()), a.GetGreedy())
}

// ObservationKind is an observation's: its source and its task's split.
func ObservationKind(o *eventspb.Observation) Kind {
	return kindBySplit(isDemo(o.GetEnvelope().GetSource(), ""), o.GetTask().GetSplit())
}

// TransitionKind is a transition's: its action's, when the action says it
// was greedy or a demonstration; else by its state's split.
func TransitionKind(t *eventspb.Transition) Kind {
	if isDemo(t.GetEnvelope().GetSource(), t.GetPolicyName()) || isDemo(t.GetAction().GetEnvelope().GetSource(), t.GetAction().GetPolicyName()) {
		return KindDemo
	}
	if t.GetAction().GetGreedy() {
		return KindGreedy
	}
	return kindBySplit(false, t.GetObs().GetTask().GetSplit())
}

// EpisodeKind is an episode summary's: its policy name or source for a
// demonstration, else its split.
func EpisodeKind(e *eventspb.Episode) Kind {
	return kindBySplit(isDemo(e.GetEnvelope().GetSource(), e.GetPolicyName()), e.GetSplit())
}
