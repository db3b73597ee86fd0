package analytics

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// One table mapping per raw table: the fields flatten one decoded event
// into the table's columns; the column names are those of
// migrations/0001_events.sql (and later migrations' ADD COLUMNs), in the
// order the INSERT names them.

func sha256Hex(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

type (
	task       = *eventspb.Task
	obs        = *eventspb.Observation
	action     = *eventspb.Action
	reward     = *eventspb.Reward
	telemetry  = *eventspb.Telemetry
	transition = *eventspb.Transition
	episode    = *eventspb.Episode
	weights    = *eventspb.Weights
	deadLetter = *eventspb.DeadLetter
)

// assignment is what Task and the TaskRef an observation carries share.
type assignment interface {
	GetTaskId() string
	GetSite() string
	GetFamily() string
	GetSeed() int64
	GetTier() eventspb.Tier
	GetSplit() eventspb.Split
	GetGroupId() string
}

// taskFields are the assignment's columns, as tasks and obs carry them.
func taskFields[E any, A assignment](get func(E) A) []field[E] {
	return fields(
		str("task_id", func(e E) string { return get(e).GetTaskId() }),
		str("site", func(e E) string { return get(e).GetSite() }),
		str("family", func(e E) string { return get(e).GetFamily() }),
		val("seed", func(e E) int64 { return get(e).GetSeed() }),
		enum("tier", func(e E) eventspb.Tier { return get(e).GetTier() }),
		enum("split", func(e E) eventspb.Split { return get(e).GetSplit() }),
		str("group_id", func(e E) string { return get(e).GetGroupId() }),
	)
}

func newTaskTable() eventTable {
	return newEventTable(topics.Tasks, eventspb.DecodeTask, nil, taskFields(func(t task) task { return t }), fields(
		val("group_size", task.GetGroupSize),
		val("max_steps", task.GetMaxSteps),
		str("policy_name", task.GetPolicyName),
		str("start_url", task.GetStartUrl),
	))
}

// The frame is stored as its size and sha256 only: frames stay on Kafka
// (and full-resolution ones in the frame store, under full_frame_hash).
func newObsTable() eventTable {
	return newEventTable(topics.Obs, eventspb.DecodeObservation, nil, taskFields(obs.GetTask), bytesOf("frame_bytes", "frame_sha256", obs.GetFrame), fields(
		str("frame_format", obs.GetFrameFormat),
		val("width", obs.GetWidth),
		val("height", obs.GetHeight),
		str("full_frame_hash", obs.GetFullFrameHash),
		str("url", obs.GetUrl),
		str("instruction", obs.GetInstruction),
		val("elements", func(o obs) uint32 { return uint32(len(o.GetElements())) }),
		flag("stable", obs.GetStable),
		val("stability_score", obs.GetStabilityScore),
		flag("terminal", obs.GetTerminal),
		val("observe_ms", func(o obs) uint32 { return o.GetTimings().GetObserveMs() }),
		val("settle_ms", func(o obs) uint32 { return o.GetTimings().GetSettleMs() }),
	))
}

func newActionTable() eventTable {
	return newEventTable(topics.Actions, eventspb.DecodeAction, nil, fields(
		enum("action_type", action.GetType),
		str("bid", action.GetBid),
		val("x", action.GetX),
		val("y", action.GetY),
		val("delta_x", action.GetDeltaX),
		val("delta_y", action.GetDeltaY),
		str("text", action.GetText),
		val("text_token", func(a action) *uint32 { return a.TextToken }), // nil (NULL) when the text was free
		str("key", action.GetKey),
		str("url", action.GetUrl),
		str("obs_event_id", action.GetObsEventId),
		val("log_prob", action.GetLogProb),
		val("value", action.GetValue),
		str("policy_name", action.GetPolicyName),
		val("policy_version", action.GetPolicyVersion),
		val("inference_latency_us", action.GetInferenceLatencyUs),
		val("batch_size", action.GetBatchSize),
		str("raw", action.GetRaw),
	))
}

func newRewardTable() eventTable {
	return newEventTable(topics.Rewards, eventspb.DecodeReward, nil, fields(
		val("reward", reward.GetReward),
		val("raw_reward", reward.GetRawReward),
		val("decayed_reward", reward.GetDecayedReward),
		flag("done", reward.GetDone),
		flag("success", reward.GetSuccess),
		flag("truncated", reward.GetTruncated),
		flag("aborted", reward.GetAborted),
		flag("timed_out", reward.GetTimedOut),
		val("facts_met", func(r reward) []string { return nonNil(r.GetFactsMet()) }),
		val("facts_total", reward.GetFactsTotal),
		str("reason", reward.GetReason),
	))
}

func newTelemetryTable() eventTable {
	return newEventTable(topics.Telemetry, eventspb.DecodeTelemetry, nil, fields(
		str("actor_id", telemetry.GetActorId),
		str("executor_id", telemetry.GetExecutorId),
		str("mode", telemetry.GetMode),
		val("window_start_ns", telemetry.GetWindowStartUnixNano),
		val("window_end_ns", telemetry.GetWindowEndUnixNano),
		val("window_end", func(t telemetry) int64 { return seconds(t.GetWindowEndUnixNano()) }),
		val("observe_us", telemetry.GetObserveUs),
		val("think_us", telemetry.GetThinkUs),
		val("act_us", telemetry.GetActUs),
		val("wait_us", telemetry.GetWaitUs),
		val("idle_us", telemetry.GetIdleUs),
		val("steps", telemetry.GetSteps),
		val("episodes", telemetry.GetEpisodes),
	))
}

// Transitions keep the ids of the embedded observations and action, not
// their frames: the full transition stays on the replay topic.
func newTransitionTable() eventTable {
	return newEventTable(topics.Transitions, eventspb.DecodeTransition, nil, fields(
		str("obs_event_id", func(t transition) string { return t.GetObs().GetEnvelope().GetEventId() }),
		str("action_event_id", func(t transition) string { return t.GetAction().GetEnvelope().GetEventId() }),
		str("next_obs_event_id", func(t transition) string { return t.GetNextObs().GetEnvelope().GetEventId() }),
		enum("action_type", func(t transition) eventspb.ActionType { return t.GetAction().GetType() }),
		val("reward", transition.GetReward),
		flag("done", transition.GetDone),
		val("log_prob_old", transition.GetLogProbOld),
		str("policy_name", transition.GetPolicyName),
		val("policy_version", transition.GetPolicyVersion),
		str("group_id", transition.GetGroupId),
		str("task_id", transition.GetTaskId),
		str("family", transition.GetFamily),
		str("site", transition.GetSite),
		enum("tier", transition.GetTier),
		flag("success", transition.GetSuccess),
		flag("truncated", transition.GetTruncated),
		val("observe_ms", func(t transition) uint32 { return t.GetTimings().GetObserveMs() }),
		val("settle_ms", func(t transition) uint32 { return t.GetTimings().GetSettleMs() }),
		val("inference_latency_us", func(t transition) uint64 { return t.GetTimings().GetInferenceLatencyUs() }),
		val("step_ms", func(t transition) uint32 { return t.GetTimings().GetStepMs() }),
		val("join_ms", func(t transition) uint32 { return t.GetTimings().GetJoinMs() }),
	))
}

// An episode's episode_id is the message's own field when the envelope
// leaves it empty.
func newEpisodeTable() eventTable {
	episodeID := func(e episode) string {
		if id := e.GetEnvelope().GetEpisodeId(); id != "" {
			return id
		}
		return e.GetEpisodeId()
	}
	return newEventTable(topics.Episodes, eventspb.DecodeEpisode, episodeID, fields(
		str("task_id", episode.GetTaskId),
		str("group_id", episode.GetGroupId),
		str("family", episode.GetFamily),
		str("site", episode.GetSite),
		enum("tier", episode.GetTier),
		enum("split", episode.GetSplit),
		val("total_return", episode.GetTotalReturn),
		val("length", episode.GetLength),
		flag("success", episode.GetSuccess),
		flag("aborted", episode.GetAborted),
		flag("truncated", episode.GetTruncated),
		val("policy_versions_used", func(e episode) []uint64 { return nonNil(e.GetPolicyVersionsUsed()) }),
		val("duration_ms", episode.GetDurationMs),
		str("policy_name", episode.GetPolicyName),
	))
}

// Weights keep the ONNX graph as its size and sha256 (the weights topic is
// compacted and keeps the bytes); the producer's onnx_sha256 is preferred
// when set, so the column matches what actors verify. Metrics are sorted by
// name so a metric sits at the same index in every row.
func newWeightsTable() eventTable {
	names := func(w weights) []string {
		out := make([]string, 0, len(w.GetMetrics()))
		for k := range w.GetMetrics() {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	return newEventTable(topics.Weights, eventspb.DecodeWeights, nil, fields(
		str("policy_name", weights.GetPolicyName),
		val("version", weights.GetVersion),
		val("parent_version", weights.GetParentVersion),
		val("onnx_bytes", func(w weights) uint32 { return uint32(len(w.GetOnnx())) }),
		str("onnx_sha256", func(w weights) string {
			if sum := w.GetOnnxSha256(); sum != "" {
				return sum
			}
			return sha256Hex(w.GetOnnx())
		}),
		str("format", weights.GetFormat),
		str("architecture", weights.GetArchitecture),
		val("metric_names", names),
		val("metric_values", func(w weights) []float64 {
			ks := names(w)
			vals := make([]float64, len(ks))
			for i, k := range ks {
				vals[i] = w.GetMetrics()[k]
			}
			return vals
		}),
		val("created_at_ns", weights.GetCreatedAtUnixNano),
		val("updates", weights.GetUpdates),
	))
}

// Dead letters keep their payload as size and sha256: it may hold a frame,
// and the dlq topic keeps the bytes for 30 days.
func newDeadLetterTable() eventTable {
	return newEventTable(topics.DLQ, eventspb.DecodeDeadLetter, nil, fields(
		str("source_topic", deadLetter.GetSourceTopic),
		val("source_partition", deadLetter.GetSourcePartition),
		val("source_offset", deadLetter.GetSourceOffset),
		str("source_key", func(d deadLetter) string { return string(d.GetSourceKey()) }),
	), bytesOf("source_payload_bytes", "source_payload_sha256", deadLetter.GetPayload), fields(
		val("source_timestamp_ns", deadLetter.GetSourceTimestampUnixNano),
		str("reason", deadLetter.GetReason),
		enum("reason_code", deadLetter.GetReasonCode),
		str("component", deadLetter.GetComponent),
		str("message_type", deadLetter.GetMessageType),
	))
}

// MaxBadPayload is how much of an undecodable record's value bad_records
// keeps verbatim; its full size and sha256 are always kept.
const MaxBadPayload = 64 << 10

// badRow is why a record did not decode.
type badRow struct {
	messageType, reason string
	code                eventspb.ReasonCode
}

// recordFields are where a record was read, first in the tables of raw
// records.
func recordFields[E any]() []field[E] {
	return fields(
		recordStr[E]("topic", func(r *Record) string { return r.Topic }),
		fromRecord[E]("partition", func(r *Record) int32 { return r.Partition }),
		fromRecord[E]("offset", func(r *Record) int64 { return r.Offset }),
		recordStr[E]("key", func(r *Record) string { return string(r.Key) }),
	)
}

func kafkaTimestamp[E any]() field[E] {
	return fromRecord[E]("kafka_timestamp", func(r *Record) int64 { return timeSeconds(r.Timestamp) })
}

func recordedAt[E any]() field[E] {
	return fromRecord[E]("recorded_at", func(r *Record) int64 { return timeSeconds(r.RecordedAt) })
}

func newBadTable() *table[badRow] {
	return newTable(TableBadRecords, recordFields[badRow](), fields(
		recordStr[badRow]("payload", func(r *Record) string { return string(r.Value[:min(len(r.Value), MaxBadPayload)]) }),
		fromRecord[badRow]("payload_bytes", func(r *Record) uint32 { return uint32(len(r.Value)) }),
		recordStr[badRow]("payload_sha256", func(r *Record) string { return sha256Hex(r.Value) }),
		fromRecord[badRow]("payload_truncated", func(r *Record) uint8 { return b2u(len(r.Value) > MaxBadPayload) }),
		kafkaTimestamp[badRow](),
		str("reason", func(b badRow) string { return b.reason }),
		enum("reason_code", func(b badRow) eventspb.ReasonCode { return b.code }),
		str("message_type", func(b badRow) string { return b.messageType }),
		recordedAt[badRow](),
	))
}

// newEventLogTable is the raw archive of the joiner's input records.
func newEventLogTable() *table[struct{}] {
	return newTable(TableEventLog, recordFields[struct{}](), fields(
		recordStr[struct{}]("value", func(r *Record) string { return string(r.Value) }),
		kafkaTimestamp[struct{}](),
		fromRecord[struct{}]("kafka_timestamp_ns", func(r *Record) int64 { return r.Timestamp.UnixNano() }),
		recordedAt[struct{}](),
	))
}

// nonNil makes an absent repeated field an empty array, not NULL.
func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
