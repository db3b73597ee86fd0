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

// taskNames are the assignment's columns, as tasks and obs carry them.
var taskNames = []string{"task_id", "site", "family", "seed", "tier", "split", "group_id"}

func newTaskTable() eventTable {
	return newEventTable(topics.Tasks, eventspb.DecodeTask, nil, named[task](taskNames...),
		named[task]("group_size", "max_steps", "policy_name", "start_url", "greedy", "demo"),
		fields(kindOf(TaskKind)))
}

// The frame is stored as its size and sha256: the frames table keeps the
// bytes of the sampled episodes' frames under that hash (frame, called
// with every decoded observation, decides; frames.go), full-resolution ones
// stay in the actors' frame store, under full_frame_hash. Of the elements,
// their bids and boxes are kept, to outline an action's target.
func newObsTable(frame func(obs, *Record)) eventTable {
	t := newEventTable(topics.Obs, eventspb.DecodeObservation, nil, namedOf(obs.GetTask, taskNames...),
		bytesOf("frame_bytes", "frame_sha256", obs.GetFrame),
		named[obs]("frame_format", "width", "height", "full_frame_hash", "url", "instruction"),
		fields(
			val("elements", func(o obs) uint32 { return uint32(len(o.GetElements())) }),
			val("element_bids", elementBids),
			val("element_boxes", elementBoxes),
		),
		named[obs]("stable", "stability_score", "terminal"),
		namedOf(obs.GetTimings, "observe_ms", "settle_ms"),
		fields(kindOf(ObservationKind)))
	d := t.(decodedTable[obs])
	d.after = frame
	return d
}

func newActionTable() eventTable {
	return newEventTable(topics.Actions, eventspb.DecodeAction, nil, fields(enum("action_type", action.GetType)),
		named[action]("bid", "to_bid", "x", "y", "to_x", "to_y", "delta_x", "delta_y", "text"),
		fields(val("options", func(a action) []string { return nonNil(a.GetOptions()) })),
		fields(val("text_token", func(a action) *uint32 { return a.TextToken })), // nil (NULL) when the text was free
		named[action]("key", "url", "obs_event_id", "log_prob", "value", "policy_name", "policy_version",
			"inference_latency_us", "batch_size", "raw", "greedy"),
		fields(
			val("lm_backend", func(a action) string { return a.GetLm().GetBackend() }),
			val("lm_model", func(a action) string { return a.GetLm().GetModel() }),
			val("lm_text", func(a action) string { return a.GetLm().GetText() }),
			val("lm_output_tokens", func(a action) uint32 { return uint32(len(a.GetLm().GetTokenLogprobs())) }),
			val("lm_prompt_tokens", func(a action) uint32 { return a.GetLm().GetPromptTokens() }),
			val("lm_finish_reason", func(a action) string { return a.GetLm().GetFinishReason() }),
			flag("lm_invalid", func(a action) bool { return a.GetLm().GetInvalid() }),
			val("lm_invalid_reason", func(a action) string { return a.GetLm().GetInvalidReason() }),
			val("lm_latency_ms", func(a action) uint32 { return a.GetLm().GetLatencyMs() }),
			val("lm_attempts", func(a action) uint32 { return a.GetLm().GetAttempts() }),
			val("lm_answer", func(a action) string { return a.GetLm().GetAnswer() }),
			val("lm_temperature", func(a action) float32 { return a.GetLm().GetTemperature() }),
		),
		fields(kindOf(ActionKind)))
}

func newRewardTable() eventTable {
	return newEventTable(topics.Rewards, eventspb.DecodeReward, nil,
		named[reward]("reward", "raw_reward", "decayed_reward", "done", "success", "truncated", "aborted", "timed_out"),
		fields(val("facts_met", func(r reward) []string { return nonNil(r.GetFactsMet()) })),
		named[reward]("facts_total", "reason"))
}

func newTelemetryTable() eventTable {
	return newEventTable(topics.Telemetry, eventspb.DecodeTelemetry, nil, named[telemetry]("actor_id", "executor_id", "mode"),
		fields(
			val("window_start_ns", telemetry.GetWindowStartUnixNano),
			val("window_end_ns", telemetry.GetWindowEndUnixNano),
			val("window_end", func(t telemetry) int64 { return seconds(t.GetWindowEndUnixNano()) }),
		),
		named[telemetry]("observe_us", "think_us", "act_us", "wait_us", "idle_us", "steps", "episodes"))
}

// Transitions keep the ids of the embedded observation and action, not
// their frames (the full transition stays on the replay topic), and the
// next state's reference: its id (from next_obs_event_id, or the embedded
// next_obs of a transition written before it) and its record's place.
func newTransitionTable() eventTable {
	return newEventTable(topics.Transitions, eventspb.DecodeTransition, nil, fields(
		str("obs_event_id", func(t transition) string { return t.GetObs().GetEnvelope().GetEventId() }),
		str("action_event_id", func(t transition) string { return t.GetAction().GetEnvelope().GetEventId() }),
		str("next_obs_event_id", eventspb.NextObsEventID),
	),
		named[transition]("next_obs_topic", "next_obs_partition", "next_obs_offset"),
		fields(enum("action_type", func(t transition) eventspb.ActionType { return t.GetAction().GetType() })),
		named[transition]("reward", "done", "log_prob_old", "policy_name", "policy_version", "group_id", "task_id",
			"family", "site", "tier", "success", "truncated"),
		namedOf(transition.GetTimings, "observe_ms", "settle_ms", "inference_latency_us", "step_ms", "join_ms"),
		fields(kindOf(TransitionKind)))
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
	return newEventTable(topics.Episodes, eventspb.DecodeEpisode, episodeID,
		named[episode]("task_id", "group_id", "family", "site", "tier", "split", "total_return", "length",
			"success", "raw_reward", "decayed_reward", "aborted", "truncated"),
		fields(val("policy_versions_used", func(e episode) []uint64 { return nonNil(e.GetPolicyVersionsUsed()) })),
		named[episode]("duration_ms", "policy_name"),
		fields(kindOf(EpisodeKind)))
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
	return newEventTable(topics.Weights, eventspb.DecodeWeights, nil, named[weights]("policy_name", "version", "parent_version"),
		fields(
			val("onnx_bytes", func(w weights) uint32 { return uint32(len(w.GetOnnx())) }),
			str("onnx_sha256", func(w weights) string {
				if sum := w.GetOnnxSha256(); sum != "" {
					return sum
				}
				return sha256Hex(w.GetOnnx())
			}),
		),
		named[weights]("format", "architecture"),
		fields(
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
		),
		named[weights]("updates"))
}

// Dead letters keep their payload as size and sha256: it may hold a frame,
// and the dlq topic keeps the bytes for 30 days.
func newDeadLetterTable() eventTable {
	return newEventTable(topics.DLQ, eventspb.DecodeDeadLetter, nil, named[deadLetter]("source_topic", "source_partition", "source_offset"),
		fields(str("source_key", func(d deadLetter) string { return string(d.GetSourceKey()) })),
		bytesOf("source_payload_bytes", "source_payload_sha256", deadLetter.GetPayload),
		fields(val("source_timestamp_ns", deadLetter.GetSourceTimestampUnixNano)),
		named[deadLetter]("reason", "reason_code", "component", "message_type"))
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

// runOf is the run column: the recorder's topic prefix (Record.Run).
func runOf[E any]() field[E] {
	return recordStr[E]("run", func(r *Record) string { return r.Run })
}

// kindOf is the kind column (kind.go).
func kindOf[E any](get func(E) Kind) field[E] {
	return val("kind", func(e E) int8 { return int8(get(e)) })
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
		runOf[badRow](),
	))
}

// newEventLogTable is the raw archive of the joiner's input records.
func newEventLogTable() *table[struct{}] {
	return newTable(TableEventLog, recordFields[struct{}](), fields(
		recordStr[struct{}]("value", func(r *Record) string { return string(r.Value) }),
		kafkaTimestamp[struct{}](),
		fromRecord[struct{}]("kafka_timestamp_ns", func(r *Record) int64 { return r.Timestamp.UnixNano() }),
		recordedAt[struct{}](),
		runOf[struct{}](),
	))
}

// nonNil makes an absent repeated field an empty array, not NULL.
func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
