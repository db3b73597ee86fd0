package analyticstest

import (
	"fmt"
	"hash/crc32"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// T0 is the dataset's time origin: every event is produced within ten
// minutes after it, so a window of [T0-1h, T0+1h) holds all of it.
var T0 = time.Date(2026, 1, 15, 10, 0, 0, 0, time.UTC)

// Item is one Kafka record of the dataset and the catalog topic it is on.
type Item struct {
	Topic  string // catalog name, e.g. topics.Actions
	Record analytics.Record
}

// Dataset is the known dataset. Its saved-query results, worked out by hand,
// are asserted in analytics/queries_integration_test.go and documented in
// analytics/README.md:
//
//   - weights of policy "pi": v1 at T0, v2 at T0+2m, v3 at T0+4m;
//   - 12 actions: at T0+30s 4 by actor-1 with v1 (staleness 0); at T0+3m 3
//     by actor-1 with v1 (staleness 1) and 2 by actor-2 with v2 (0); at
//     T0+5m 1 by actor-2 with v1 (2) and 2 by actor-2 with v3 (0);
//   - telemetry: actor-1 (async) executors e1 (observe 100, think 200, act
//     100, wait 500, idle 100 µs; 3 steps) and e2 (idle 1000 µs), windows
//     ending at T0+1m; actor-2 (sync) e1, 200 µs in each phase, 5 steps,
//     ending at T0+2m;
//   - 10 episodes: easy/click/s1/train with v1 at T0+1m (click-1: length 2
//     success, click-2: 3 success) and T0+6m (click-3: 3 success, click-4: 5
//     failed and truncated); hard/shop/s2/test (held out: greedy) with
//     versions [1 2] at T0+6m (10 success, 1 aborted); two demonstrations
//     (policy "oracle", source demo) of easy/click/s1/train at T0+1m, length
//     2, both successful; easy/miniwob/click-test/miniwob/train with v3 at
//     T0+6m (mw-1: length 1 success, mw-2: 4 failed);
//   - 3 observations (tiny frames) and 5 rewards by actor-1, 2 tasks by
//     scheduler, 2 transitions and 1 dead letter (stale action) by joiner-0;
//   - by actor-3 at T0+6m, v3: the last two actions of click-4 (click("b1")
//     at step 3, fill("b2", "x") at step 4) and the last of mw-2 (click("b7")
//     at step 3); the final rewards of click-1 (facts clicked and submitted
//     of 2), click-4 (clicked of 2, truncated) and mw-2 (no facts);
//   - 2 undecodable records on the obs topic.
//
// Every record carries prefix as its run (Record.Run) and its topic's
// prefix; event and episode ids differ between prefixes, so that datasets
// of several runs can share a database.
func Dataset(prefix string) []Item {
	var items []Item
	offsets := map[string]int64{}
	n := 0
	run := crc32.ChecksumIEEE([]byte(prefix))
	add := func(topic, producer string, at time.Duration, build func(env *eventspb.Envelope) proto.Message) {
		n++
		env := &eventspb.Envelope{
			EventId:            fmt.Sprintf("%08x-0000-7000-8000-%012d", run, n),
			SchemaVersion:      eventspb.SchemaVersion,
			Producer:           producer,
			ProducedAtUnixNano: T0.Add(at).UnixNano(),
			Source:             eventspb.Source_SOURCE_SYNTHETIC,
		}
		b, err := eventspb.Marshal(build(env))
		if err != nil {
			panic(fmt.Sprintf("dataset event %d does not marshal: %v", n, err)) // a bug in this file, not input
		}
		items = append(items, Item{Topic: topic, Record: analytics.Record{
			Topic: prefix + topic, Partition: 0, Offset: offsets[topic], Value: b,
			Timestamp: T0.Add(at), RecordedAt: T0.Add(at + time.Second), Run: prefix,
		}})
		offsets[topic]++
	}
	for i, at := range []time.Duration{0, 2 * time.Minute, 4 * time.Minute} {
		v := uint64(i + 1)
		add(topics.Weights, "learner-0", at, func(env *eventspb.Envelope) proto.Message {
			// The learner's statistics of the update before version v: loss
			// 0.6 − 0.1v, approx KL 0.01v, clip fraction 0.35 − 0.1v, entropy
			// 3.5 − 0.5v, staleness of its samples 0.5v (largest v), after
			// 10v updates (learner_stats).
			fv := float64(v)
			return &eventspb.Weights{Envelope: env, PolicyName: "pi", Version: v, ParentVersion: v - 1, Updates: 10 * v,
				Onnx: []byte{1, 2, 3, byte(v)}, Format: "onnx", Metrics: map[string]float64{
					"loss": 0.6 - 0.1*fv, "approx_kl": 0.01 * fv, "clip_frac": 0.35 - 0.1*fv, "entropy": 3.5 - 0.5*fv,
					"staleness": 0.5 * fv, "max_staleness": fv}}
		})
	}
	action := func(producer string, at time.Duration, version uint64, count int) {
		for i := 0; i < count; i++ {
			add(topics.Actions, producer, at, func(env *eventspb.Envelope) proto.Message {
				env.EpisodeId = "ep-" + producer
				env.Step = uint32(i)
				return &eventspb.Action{Envelope: env, Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: "b1",
					LogProb: -0.5, PolicyName: "pi", PolicyVersion: version, InferenceLatencyUs: 1500, BatchSize: 4,
					Raw: `click("b1")`}
			})
		}
	}
	action("actor-1", 30*time.Second, 1, 4)
	action("actor-1", 3*time.Minute, 1, 3)
	action("actor-2", 3*time.Minute, 2, 2)
	action("actor-2", 5*time.Minute, 1, 1)
	action("actor-2", 5*time.Minute, 3, 2)

	telemetry := func(actor, executor, mode string, end time.Duration, o, th, a, w, idle uint64, steps uint32) {
		add(topics.Telemetry, actor, end, func(env *eventspb.Envelope) proto.Message {
			return &eventspb.Telemetry{Envelope: env, ActorId: actor, ExecutorId: executor, Mode: mode,
				WindowStartUnixNano: T0.Add(end - 10*time.Second).UnixNano(), WindowEndUnixNano: T0.Add(end).UnixNano(),
				ObserveUs: o, ThinkUs: th, ActUs: a, WaitUs: w, IdleUs: idle, Steps: steps}
		})
	}
	telemetry("actor-1", "e1", "async", time.Minute, 100, 200, 100, 500, 100, 3)
	telemetry("actor-1", "e2", "async", time.Minute, 0, 0, 0, 0, 1000, 0)
	telemetry("actor-2", "e1", "sync", 2*time.Minute, 200, 200, 200, 200, 200, 5)

	episode := func(id string, at time.Duration, tier eventspb.Tier, family, site string, split eventspb.Split, versions []uint64,
		length uint32, success, truncated, aborted bool) {
		add(topics.Episodes, "joiner-0", at, func(env *eventspb.Envelope) proto.Message {
			id := prefix + id
			env.EpisodeId = id
			policy := "pi"
			if versions == nil {
				// A demonstration: the joiner names it after its actions'
				// policy, and its events carry source demo.
				policy, env.Source = "oracle", eventspb.Source_SOURCE_DEMO
			}
			ep := &eventspb.Episode{Envelope: env, TaskId: family + "/seed-1", EpisodeId: id, Family: family, Site: site,
				Tier: tier, Split: split, Length: length, Success: success, Truncated: truncated, Aborted: aborted,
				PolicyVersionsUsed: versions, PolicyName: policy, TotalReturn: map[bool]float64{true: 1}[success]}
			if strings.HasPrefix(family, "miniwob/") {
				// MiniWoB++'s raw reward: 1 or -1 here, its decayed
				// reward 0.8 of it.
				ep.RawReward = map[bool]float64{true: 1, false: -1}[success]
				ep.DecayedReward = 0.8 * ep.RawReward
			}
			return ep
		})
	}
	easy, hard := eventspb.Tier_TIER_EASY, eventspb.Tier_TIER_HARD
	train, test := eventspb.Split_SPLIT_TRAIN, eventspb.Split_SPLIT_TEST
	episode("click-1", time.Minute, easy, "click", "s1", train, []uint64{1}, 2, true, false, false)
	episode("click-2", time.Minute, easy, "click", "s1", train, []uint64{1}, 3, true, false, false)
	episode("click-3", 6*time.Minute, easy, "click", "s1", train, []uint64{1}, 3, true, false, false)
	episode("click-4", 6*time.Minute, easy, "click", "s1", train, []uint64{1}, 5, false, true, false)
	episode("shop-1", 6*time.Minute, hard, "shop", "s2", test, []uint64{1, 2}, 10, true, false, false)
	episode("shop-2", 6*time.Minute, hard, "shop", "s2", test, []uint64{1, 2}, 1, false, false, true)
	episode("demo-1", time.Minute, easy, "click", "s1", train, nil, 2, true, false, false)
	episode("demo-2", time.Minute, easy, "click", "s1", train, nil, 2, true, false, false)
	episode("mw-1", 6*time.Minute, easy, "miniwob/click-test", "miniwob", train, []uint64{3}, 1, true, false, false)
	episode("mw-2", 6*time.Minute, easy, "miniwob/click-test", "miniwob", train, []uint64{3}, 4, false, false, false)

	// The failed episodes' last actions and final rewards (failure
	// analysis), and click-1's final reward, which names click's facts.
	last := func(id string, step uint32, typ eventspb.ActionType, raw string) {
		add(topics.Actions, "actor-3", 6*time.Minute, func(env *eventspb.Envelope) proto.Message {
			env.EpisodeId, env.Step, env.Source = prefix+id, step, eventspb.Source_SOURCE_POLICY
			return &eventspb.Action{Envelope: env, Type: typ, Bid: "b1", LogProb: -0.5, PolicyName: "pi", PolicyVersion: 3,
				InferenceLatencyUs: 1500, BatchSize: 4, Raw: raw}
		})
	}
	last("click-4", 3, eventspb.ActionType_ACTION_TYPE_CLICK, `click("b1")`)
	last("click-4", 4, eventspb.ActionType_ACTION_TYPE_FILL, `fill("b2", "x")`)
	last("mw-2", 3, eventspb.ActionType_ACTION_TYPE_CLICK, `click("b7")`)
	final := func(id string, step uint32, success, truncated bool, facts []string, total uint32) {
		add(topics.Rewards, "actor-3", 6*time.Minute, func(env *eventspb.Envelope) proto.Message {
			env.EpisodeId, env.Step, env.Source = prefix+id, step, eventspb.Source_SOURCE_POLICY
			return &eventspb.Reward{Envelope: env, Done: true, Success: success, Truncated: truncated,
				FactsMet: facts, FactsTotal: total}
		})
	}
	final("click-1", 1, true, false, []string{"clicked", "submitted"}, 2)
	final("click-4", 4, false, true, []string{"clicked"}, 2)
	final("mw-2", 3, false, false, nil, 0)

	for i := 0; i < 3; i++ {
		add(topics.Obs, "actor-1", 30*time.Second, func(env *eventspb.Envelope) proto.Message {
			env.EpisodeId = "ep-actor-1"
			env.Step = uint32(i)
			return &eventspb.Observation{Envelope: env, Task: &eventspb.TaskRef{TaskId: "click/seed-1", Site: "s1",
				Family: "click", Tier: easy, Split: train}, Frame: []byte{0x89, 'P', 'N', 'G', byte(i)}, FrameFormat: "png",
				Width: 64, Height: 64, Url: "http://127.0.0.1/click", Stable: true, StabilityScore: 1,
				Elements: []*eventspb.Element{{Bid: "b1", Role: "button", Text: "OK"}}}
		})
	}
	for i := 0; i < 5; i++ {
		add(topics.Rewards, "actor-1", time.Minute, func(env *eventspb.Envelope) proto.Message {
			env.EpisodeId = "ep-actor-1"
			env.Step = uint32(i)
			return &eventspb.Reward{Envelope: env, Reward: 0.25, RawReward: 0.25, Done: i == 4, Success: i == 4,
				FactsMet: []string{"clicked"}, FactsTotal: 2}
		})
	}
	for i := 0; i < 2; i++ {
		add(topics.Tasks, "scheduler", 0, func(env *eventspb.Envelope) proto.Message {
			return &eventspb.Task{Envelope: env, TaskId: "click/seed-1", Site: "s1", Family: "click", Seed: 1,
				Tier: easy, Split: train, MaxSteps: 10, PolicyName: "pi"}
		})
	}
	for i := 0; i < 2; i++ {
		add(topics.Transitions, "joiner-0", 2*time.Minute, func(env *eventspb.Envelope) proto.Message {
			env.EpisodeId = "ep-actor-1"
			env.Step = uint32(i)
			obs := &eventspb.Observation{Envelope: &eventspb.Envelope{EventId: "obs-" + fmt.Sprint(i), SchemaVersion: 1}}
			act := &eventspb.Action{Envelope: &eventspb.Envelope{EventId: "act-" + fmt.Sprint(i), SchemaVersion: 1},
				Type: eventspb.ActionType_ACTION_TYPE_CLICK}
			return &eventspb.Transition{Envelope: env, EpisodeId: "ep-actor-1", Step: uint32(i), Obs: obs, Action: act,
				Done: true, PolicyVersion: 1, PolicyName: "pi", Tier: easy, Family: "click", Site: "s1"}
		})
	}
	add(topics.DLQ, "joiner-0", 2*time.Minute, func(env *eventspb.Envelope) proto.Message {
		return &eventspb.DeadLetter{Envelope: env, SourceTopic: prefix + topics.Actions, SourcePartition: 0, SourceOffset: 7,
			Payload: []byte("x"), Reason: "policy version 1 is 3 behind 4", ReasonCode: eventspb.ReasonCode_REASON_CODE_STALE,
			Component: "joiner", MessageType: "asyncwebrl.v1.Action"}
	})
	for i := 0; i < 2; i++ {
		items = append(items, Item{Topic: topics.Obs, Record: analytics.Record{
			Topic: prefix + topics.Obs, Partition: 1, Offset: int64(100 + i), Value: []byte{0xff, 0xff, 0xff, byte(i)},
			Timestamp: T0.Add(time.Minute), RecordedAt: T0.Add(time.Minute), Run: prefix,
		}})
	}
	return items
}

// Lag is the known consumer_lag snapshots: group g1 on the actions topic,
// partition 0 with lag 5 at T0+1m, 6 at T0+1m30s and 0 at T0+3m (committed
// 20 of 20); partition 1 with lag 2 at T0+1m.
func Lag(prefix string) []analytics.LagRow {
	topic := prefix + topics.Actions
	row := func(at time.Duration, p int32, committed, end int64) analytics.LagRow {
		return analytics.LagRow{TakenAt: T0.Add(at), Group: "g1", Topic: topic, Partition: p, Committed: committed,
			End: end, Lag: end - committed, TakenBy: "test", Run: prefix}
	}
	return []analytics.LagRow{
		row(time.Minute, 0, 10, 15),
		row(90*time.Second, 0, 14, 20),
		row(3*time.Minute, 0, 20, 20),
		row(time.Minute, 1, 3, 5),
	}
}
