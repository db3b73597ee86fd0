package analytics

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// One block type per raw table. Each add method flattens one decoded event
// into the table's columns; the column names are those of
// migrations/0001_events.sql.

func sha256Hex(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

type taskBlock struct {
	Block
	env                  envCols
	taskID, site, family *strCol
	seed                 *col[int64]
	tier, split          *col[int8]
	groupID              *strCol
	groupSize, maxSteps  *col[uint32]
	policyName, startURL *strCol
}

func newTaskBlock() *taskBlock {
	b := &taskBlock{Block: Block{table: TableTasks}}
	b.env = newEnvCols(&b.Block)
	b.taskID = newStrCol(&b.Block, "task_id")
	b.site = newStrCol(&b.Block, "site")
	b.family = newStrCol(&b.Block, "family")
	b.seed = newCol[int64](&b.Block, "seed")
	b.tier = newCol[int8](&b.Block, "tier")
	b.split = newCol[int8](&b.Block, "split")
	b.groupID = newStrCol(&b.Block, "group_id")
	b.groupSize = newCol[uint32](&b.Block, "group_size")
	b.maxSteps = newCol[uint32](&b.Block, "max_steps")
	b.policyName = newStrCol(&b.Block, "policy_name")
	b.startURL = newStrCol(&b.Block, "start_url")
	return b
}

func (b *taskBlock) add(ev *eventspb.Task, r *Record) {
	b.env.add(ev.GetEnvelope(), r)
	b.taskID.add(ev.GetTaskId())
	b.site.add(ev.GetSite())
	b.family.add(ev.GetFamily())
	b.seed.add(ev.GetSeed())
	b.tier.add(int8(ev.GetTier()))
	b.split.add(int8(ev.GetSplit()))
	b.groupID.add(ev.GetGroupId())
	b.groupSize.add(ev.GetGroupSize())
	b.maxSteps.add(ev.GetMaxSteps())
	b.policyName.add(ev.GetPolicyName())
	b.startURL.add(ev.GetStartUrl())
	b.rows++
}

type obsBlock struct {
	Block
	env                             envCols
	taskID, site, family            *strCol
	seed                            *col[int64]
	tier, split                     *col[int8]
	groupID                         *strCol
	frameBytes                      *col[uint32]
	frameSHA, frameFormat           *strCol
	width, height                   *col[uint32]
	fullFrameHash, url, instruction *strCol
	elements                        *col[uint32]
	stable                          *col[uint8]
	stabilityScore                  *col[float64]
	terminal                        *col[uint8]
	observeMs, settleMs             *col[uint32]
}

func newObsBlock() *obsBlock {
	b := &obsBlock{Block: Block{table: TableObs}}
	b.env = newEnvCols(&b.Block)
	b.taskID = newStrCol(&b.Block, "task_id")
	b.site = newStrCol(&b.Block, "site")
	b.family = newStrCol(&b.Block, "family")
	b.seed = newCol[int64](&b.Block, "seed")
	b.tier = newCol[int8](&b.Block, "tier")
	b.split = newCol[int8](&b.Block, "split")
	b.groupID = newStrCol(&b.Block, "group_id")
	b.frameBytes = newCol[uint32](&b.Block, "frame_bytes")
	b.frameSHA = newStrCol(&b.Block, "frame_sha256")
	b.frameFormat = newStrCol(&b.Block, "frame_format")
	b.width = newCol[uint32](&b.Block, "width")
	b.height = newCol[uint32](&b.Block, "height")
	b.fullFrameHash = newStrCol(&b.Block, "full_frame_hash")
	b.url = newStrCol(&b.Block, "url")
	b.instruction = newStrCol(&b.Block, "instruction")
	b.elements = newCol[uint32](&b.Block, "elements")
	b.stable = newCol[uint8](&b.Block, "stable")
	b.stabilityScore = newCol[float64](&b.Block, "stability_score")
	b.terminal = newCol[uint8](&b.Block, "terminal")
	b.observeMs = newCol[uint32](&b.Block, "observe_ms")
	b.settleMs = newCol[uint32](&b.Block, "settle_ms")
	return b
}

// add stores the frame as its size and sha256 only: frames stay on Kafka
// (and full-resolution ones in the frame store, under full_frame_hash).
func (b *obsBlock) add(ev *eventspb.Observation, r *Record) {
	b.env.add(ev.GetEnvelope(), r)
	t := ev.GetTask()
	b.taskID.add(t.GetTaskId())
	b.site.add(t.GetSite())
	b.family.add(t.GetFamily())
	b.seed.add(t.GetSeed())
	b.tier.add(int8(t.GetTier()))
	b.split.add(int8(t.GetSplit()))
	b.groupID.add(t.GetGroupId())
	b.frameBytes.add(uint32(len(ev.GetFrame())))
	b.frameSHA.add(sha256Hex(ev.GetFrame()))
	b.frameFormat.add(ev.GetFrameFormat())
	b.width.add(ev.GetWidth())
	b.height.add(ev.GetHeight())
	b.fullFrameHash.add(ev.GetFullFrameHash())
	b.url.add(ev.GetUrl())
	b.instruction.add(ev.GetInstruction())
	b.elements.add(uint32(len(ev.GetElements())))
	b.stable.add(b2u(ev.GetStable()))
	b.stabilityScore.add(ev.GetStabilityScore())
	b.terminal.add(b2u(ev.GetTerminal()))
	b.observeMs.add(ev.GetTimings().GetObserveMs())
	b.settleMs.add(ev.GetTimings().GetSettleMs())
	b.rows++
}

type actionBlock struct {
	Block
	env                               envCols
	actionType                        *col[int8]
	bid                               *strCol
	x, y, deltaX, deltaY              *col[float32]
	text                              *strCol
	textToken                         *col[*uint32]
	key, url, obsEventID              *strCol
	logProb, value                    *col[float64]
	policyName                        *strCol
	policyVersion, inferenceLatencyUs *col[uint64]
	batchSize                         *col[uint32]
	raw                               *strCol
}

func newActionBlock() *actionBlock {
	b := &actionBlock{Block: Block{table: TableActions}}
	b.env = newEnvCols(&b.Block)
	b.actionType = newCol[int8](&b.Block, "action_type")
	b.bid = newStrCol(&b.Block, "bid")
	b.x = newCol[float32](&b.Block, "x")
	b.y = newCol[float32](&b.Block, "y")
	b.deltaX = newCol[float32](&b.Block, "delta_x")
	b.deltaY = newCol[float32](&b.Block, "delta_y")
	b.text = newStrCol(&b.Block, "text")
	b.textToken = newCol[*uint32](&b.Block, "text_token")
	b.key = newStrCol(&b.Block, "key")
	b.url = newStrCol(&b.Block, "url")
	b.obsEventID = newStrCol(&b.Block, "obs_event_id")
	b.logProb = newCol[float64](&b.Block, "log_prob")
	b.value = newCol[float64](&b.Block, "value")
	b.policyName = newStrCol(&b.Block, "policy_name")
	b.policyVersion = newCol[uint64](&b.Block, "policy_version")
	b.inferenceLatencyUs = newCol[uint64](&b.Block, "inference_latency_us")
	b.batchSize = newCol[uint32](&b.Block, "batch_size")
	b.raw = newStrCol(&b.Block, "raw")
	return b
}

func (b *actionBlock) add(ev *eventspb.Action, r *Record) {
	b.env.add(ev.GetEnvelope(), r)
	b.actionType.add(int8(ev.GetType()))
	b.bid.add(ev.GetBid())
	b.x.add(ev.GetX())
	b.y.add(ev.GetY())
	b.deltaX.add(ev.GetDeltaX())
	b.deltaY.add(ev.GetDeltaY())
	b.text.add(ev.GetText())
	b.textToken.add(ev.TextToken) // nil (NULL) when the text was free
	b.key.add(ev.GetKey())
	b.url.add(ev.GetUrl())
	b.obsEventID.add(ev.GetObsEventId())
	b.logProb.add(ev.GetLogProb())
	b.value.add(ev.GetValue())
	b.policyName.add(ev.GetPolicyName())
	b.policyVersion.add(ev.GetPolicyVersion())
	b.inferenceLatencyUs.add(ev.GetInferenceLatencyUs())
	b.batchSize.add(ev.GetBatchSize())
	b.raw.add(ev.GetRaw())
	b.rows++
}

type rewardBlock struct {
	Block
	env                               envCols
	reward, rawReward, decayedReward  *col[float64]
	done, success, truncated, aborted *col[uint8]
	timedOut                          *col[uint8]
	factsMet                          *col[[]string]
	factsTotal                        *col[uint32]
	reason                            *strCol
}

func newRewardBlock() *rewardBlock {
	b := &rewardBlock{Block: Block{table: TableRewards}}
	b.env = newEnvCols(&b.Block)
	b.reward = newCol[float64](&b.Block, "reward")
	b.rawReward = newCol[float64](&b.Block, "raw_reward")
	b.decayedReward = newCol[float64](&b.Block, "decayed_reward")
	b.done = newCol[uint8](&b.Block, "done")
	b.success = newCol[uint8](&b.Block, "success")
	b.truncated = newCol[uint8](&b.Block, "truncated")
	b.aborted = newCol[uint8](&b.Block, "aborted")
	b.timedOut = newCol[uint8](&b.Block, "timed_out")
	b.factsMet = newCol[[]string](&b.Block, "facts_met")
	b.factsTotal = newCol[uint32](&b.Block, "facts_total")
	b.reason = newStrCol(&b.Block, "reason")
	return b
}

func (b *rewardBlock) add(ev *eventspb.Reward, r *Record) {
	b.env.add(ev.GetEnvelope(), r)
	b.reward.add(ev.GetReward())
	b.rawReward.add(ev.GetRawReward())
	b.decayedReward.add(ev.GetDecayedReward())
	b.done.add(b2u(ev.GetDone()))
	b.success.add(b2u(ev.GetSuccess()))
	b.truncated.add(b2u(ev.GetTruncated()))
	b.aborted.add(b2u(ev.GetAborted()))
	b.timedOut.add(b2u(ev.GetTimedOut()))
	facts := ev.GetFactsMet()
	if facts == nil {
		facts = []string{}
	}
	b.factsMet.add(facts)
	b.factsTotal.add(ev.GetFactsTotal())
	b.reason.add(ev.GetReason())
	b.rows++
}

type telemetryBlock struct {
	Block
	env                                   envCols
	actorID, executorID, mode             *strCol
	windowStartNs, windowEndNs, windowEnd *col[int64]
	observeUs, thinkUs, actUs, waitUs     *col[uint64]
	idleUs                                *col[uint64]
	steps, episodes                       *col[uint32]
}

func newTelemetryBlock() *telemetryBlock {
	b := &telemetryBlock{Block: Block{table: TableTelemetry}}
	b.env = newEnvCols(&b.Block)
	b.actorID = newStrCol(&b.Block, "actor_id")
	b.executorID = newStrCol(&b.Block, "executor_id")
	b.mode = newStrCol(&b.Block, "mode")
	b.windowStartNs = newCol[int64](&b.Block, "window_start_ns")
	b.windowEndNs = newCol[int64](&b.Block, "window_end_ns")
	b.windowEnd = newCol[int64](&b.Block, "window_end")
	b.observeUs = newCol[uint64](&b.Block, "observe_us")
	b.thinkUs = newCol[uint64](&b.Block, "think_us")
	b.actUs = newCol[uint64](&b.Block, "act_us")
	b.waitUs = newCol[uint64](&b.Block, "wait_us")
	b.idleUs = newCol[uint64](&b.Block, "idle_us")
	b.steps = newCol[uint32](&b.Block, "steps")
	b.episodes = newCol[uint32](&b.Block, "episodes")
	return b
}

func (b *telemetryBlock) add(ev *eventspb.Telemetry, r *Record) {
	b.env.add(ev.GetEnvelope(), r)
	b.actorID.add(ev.GetActorId())
	b.executorID.add(ev.GetExecutorId())
	b.mode.add(ev.GetMode())
	b.windowStartNs.add(ev.GetWindowStartUnixNano())
	b.windowEndNs.add(ev.GetWindowEndUnixNano())
	b.windowEnd.add(seconds(ev.GetWindowEndUnixNano()))
	b.observeUs.add(ev.GetObserveUs())
	b.thinkUs.add(ev.GetThinkUs())
	b.actUs.add(ev.GetActUs())
	b.waitUs.add(ev.GetWaitUs())
	b.idleUs.add(ev.GetIdleUs())
	b.steps.add(ev.GetSteps())
	b.episodes.add(ev.GetEpisodes())
	b.rows++
}

type transitionBlock struct {
	Block
	env                                       envCols
	obsEventID, actionEventID, nextObsEventID *strCol
	actionType                                *col[int8]
	reward                                    *col[float64]
	done                                      *col[uint8]
	logProbOld                                *col[float64]
	policyName                                *strCol
	policyVersion                             *col[uint64]
	groupID, taskID, family, site             *strCol
	tier                                      *col[int8]
	success, truncated                        *col[uint8]
	observeMs, settleMs                       *col[uint32]
	inferenceLatencyUs                        *col[uint64]
	stepMs, joinMs                            *col[uint32]
}

func newTransitionBlock() *transitionBlock {
	b := &transitionBlock{Block: Block{table: TableTransitions}}
	b.env = newEnvCols(&b.Block)
	b.obsEventID = newStrCol(&b.Block, "obs_event_id")
	b.actionEventID = newStrCol(&b.Block, "action_event_id")
	b.nextObsEventID = newStrCol(&b.Block, "next_obs_event_id")
	b.actionType = newCol[int8](&b.Block, "action_type")
	b.reward = newCol[float64](&b.Block, "reward")
	b.done = newCol[uint8](&b.Block, "done")
	b.logProbOld = newCol[float64](&b.Block, "log_prob_old")
	b.policyName = newStrCol(&b.Block, "policy_name")
	b.policyVersion = newCol[uint64](&b.Block, "policy_version")
	b.groupID = newStrCol(&b.Block, "group_id")
	b.taskID = newStrCol(&b.Block, "task_id")
	b.family = newStrCol(&b.Block, "family")
	b.site = newStrCol(&b.Block, "site")
	b.tier = newCol[int8](&b.Block, "tier")
	b.success = newCol[uint8](&b.Block, "success")
	b.truncated = newCol[uint8](&b.Block, "truncated")
	b.observeMs = newCol[uint32](&b.Block, "observe_ms")
	b.settleMs = newCol[uint32](&b.Block, "settle_ms")
	b.inferenceLatencyUs = newCol[uint64](&b.Block, "inference_latency_us")
	b.stepMs = newCol[uint32](&b.Block, "step_ms")
	b.joinMs = newCol[uint32](&b.Block, "join_ms")
	return b
}

// add keeps the ids of the embedded observations and action, not their
// frames: the full transition stays on the replay topic.
func (b *transitionBlock) add(ev *eventspb.Transition, r *Record) {
	b.env.add(ev.GetEnvelope(), r)
	b.obsEventID.add(ev.GetObs().GetEnvelope().GetEventId())
	b.actionEventID.add(ev.GetAction().GetEnvelope().GetEventId())
	b.nextObsEventID.add(ev.GetNextObs().GetEnvelope().GetEventId())
	b.actionType.add(int8(ev.GetAction().GetType()))
	b.reward.add(ev.GetReward())
	b.done.add(b2u(ev.GetDone()))
	b.logProbOld.add(ev.GetLogProbOld())
	b.policyName.add(ev.GetPolicyName())
	b.policyVersion.add(ev.GetPolicyVersion())
	b.groupID.add(ev.GetGroupId())
	b.taskID.add(ev.GetTaskId())
	b.family.add(ev.GetFamily())
	b.site.add(ev.GetSite())
	b.tier.add(int8(ev.GetTier()))
	b.success.add(b2u(ev.GetSuccess()))
	b.truncated.add(b2u(ev.GetTruncated()))
	tm := ev.GetTimings()
	b.observeMs.add(tm.GetObserveMs())
	b.settleMs.add(tm.GetSettleMs())
	b.inferenceLatencyUs.add(tm.GetInferenceLatencyUs())
	b.stepMs.add(tm.GetStepMs())
	b.joinMs.add(tm.GetJoinMs())
	b.rows++
}

type episodeBlock struct {
	Block
	env                           envCols
	taskID, groupID, family, site *strCol
	tier, split                   *col[int8]
	totalReturn                   *col[float64]
	length                        *col[uint32]
	success, aborted, truncated   *col[uint8]
	versionsUsed                  *col[[]uint64]
	durationMs                    *col[uint64]
	policyName                    *strCol
}

func newEpisodeBlock() *episodeBlock {
	b := &episodeBlock{Block: Block{table: TableEpisodes}}
	b.env = newEnvCols(&b.Block)
	b.taskID = newStrCol(&b.Block, "task_id")
	b.groupID = newStrCol(&b.Block, "group_id")
	b.family = newStrCol(&b.Block, "family")
	b.site = newStrCol(&b.Block, "site")
	b.tier = newCol[int8](&b.Block, "tier")
	b.split = newCol[int8](&b.Block, "split")
	b.totalReturn = newCol[float64](&b.Block, "total_return")
	b.length = newCol[uint32](&b.Block, "length")
	b.success = newCol[uint8](&b.Block, "success")
	b.aborted = newCol[uint8](&b.Block, "aborted")
	b.truncated = newCol[uint8](&b.Block, "truncated")
	b.versionsUsed = newCol[[]uint64](&b.Block, "policy_versions_used")
	b.durationMs = newCol[uint64](&b.Block, "duration_ms")
	b.policyName = newStrCol(&b.Block, "policy_name")
	return b
}

// add stores the episode under its envelope; episode_id is the message's
// own field when the envelope leaves it empty.
func (b *episodeBlock) add(ev *eventspb.Episode, r *Record) {
	b.env.add(ev.GetEnvelope(), r)
	if ev.GetEnvelope().GetEpisodeId() == "" {
		b.env.episodeID.setLast(ev.GetEpisodeId())
	}
	b.taskID.add(ev.GetTaskId())
	b.groupID.add(ev.GetGroupId())
	b.family.add(ev.GetFamily())
	b.site.add(ev.GetSite())
	b.tier.add(int8(ev.GetTier()))
	b.split.add(int8(ev.GetSplit()))
	b.totalReturn.add(ev.GetTotalReturn())
	b.length.add(ev.GetLength())
	b.success.add(b2u(ev.GetSuccess()))
	b.aborted.add(b2u(ev.GetAborted()))
	b.truncated.add(b2u(ev.GetTruncated()))
	v := ev.GetPolicyVersionsUsed()
	if v == nil {
		v = []uint64{}
	}
	b.versionsUsed.add(v)
	b.durationMs.add(ev.GetDurationMs())
	b.policyName.add(ev.GetPolicyName())
	b.rows++
}

type weightsBlock struct {
	Block
	env                           envCols
	policyName                    *strCol
	version, parentVersion        *col[uint64]
	onnxBytes                     *col[uint32]
	onnxSHA, format, architecture *strCol
	metricNames                   *col[[]string]
	metricValues                  *col[[]float64]
	createdAtNs                   *col[int64]
	updates                       *col[uint64]
}

func newWeightsBlock() *weightsBlock {
	b := &weightsBlock{Block: Block{table: TableWeights}}
	b.env = newEnvCols(&b.Block)
	b.policyName = newStrCol(&b.Block, "policy_name")
	b.version = newCol[uint64](&b.Block, "version")
	b.parentVersion = newCol[uint64](&b.Block, "parent_version")
	b.onnxBytes = newCol[uint32](&b.Block, "onnx_bytes")
	b.onnxSHA = newStrCol(&b.Block, "onnx_sha256")
	b.format = newStrCol(&b.Block, "format")
	b.architecture = newStrCol(&b.Block, "architecture")
	b.metricNames = newCol[[]string](&b.Block, "metric_names")
	b.metricValues = newCol[[]float64](&b.Block, "metric_values")
	b.createdAtNs = newCol[int64](&b.Block, "created_at_ns")
	b.updates = newCol[uint64](&b.Block, "updates")
	return b
}

// add keeps the ONNX graph as its size and sha256 (the weights topic is
// compacted and keeps the bytes); the producer's onnx_sha256 is preferred
// when set, so the column matches what actors verify.
func (b *weightsBlock) add(ev *eventspb.Weights, r *Record) {
	b.env.add(ev.GetEnvelope(), r)
	b.policyName.add(ev.GetPolicyName())
	b.version.add(ev.GetVersion())
	b.parentVersion.add(ev.GetParentVersion())
	b.onnxBytes.add(uint32(len(ev.GetOnnx())))
	sum := ev.GetOnnxSha256()
	if sum == "" {
		sum = sha256Hex(ev.GetOnnx())
	}
	b.onnxSHA.add(sum)
	b.format.add(ev.GetFormat())
	b.architecture.add(ev.GetArchitecture())
	// Sorted by name so a metric sits at the same index in every row.
	names := make([]string, 0, len(ev.GetMetrics()))
	for k := range ev.GetMetrics() {
		names = append(names, k)
	}
	sort.Strings(names)
	vals := make([]float64, len(names))
	for i, k := range names {
		vals[i] = ev.GetMetrics()[k]
	}
	b.metricNames.add(names)
	b.metricValues.add(vals)
	b.createdAtNs.add(ev.GetCreatedAtUnixNano())
	b.updates.add(ev.GetUpdates())
	b.rows++
}

type deadLetterBlock struct {
	Block
	env                    envCols
	sourceTopic            *strCol
	sourcePartition        *col[int32]
	sourceOffset           *col[int64]
	sourceKey              *strCol
	sourcePayloadBytes     *col[uint32]
	sourcePayloadSHA       *strCol
	sourceTimestampNs      *col[int64]
	reason                 *strCol
	reasonCode             *col[int8]
	component, messageType *strCol
}

func newDeadLetterBlock() *deadLetterBlock {
	b := &deadLetterBlock{Block: Block{table: TableDeadLetters}}
	b.env = newEnvCols(&b.Block)
	b.sourceTopic = newStrCol(&b.Block, "source_topic")
	b.sourcePartition = newCol[int32](&b.Block, "source_partition")
	b.sourceOffset = newCol[int64](&b.Block, "source_offset")
	b.sourceKey = newStrCol(&b.Block, "source_key")
	b.sourcePayloadBytes = newCol[uint32](&b.Block, "source_payload_bytes")
	b.sourcePayloadSHA = newStrCol(&b.Block, "source_payload_sha256")
	b.sourceTimestampNs = newCol[int64](&b.Block, "source_timestamp_ns")
	b.reason = newStrCol(&b.Block, "reason")
	b.reasonCode = newCol[int8](&b.Block, "reason_code")
	b.component = newStrCol(&b.Block, "component")
	b.messageType = newStrCol(&b.Block, "message_type")
	return b
}

// add keeps the dead letter's payload as size and sha256: it may hold a
// frame, and the dlq topic keeps the bytes for 30 days.
func (b *deadLetterBlock) add(ev *eventspb.DeadLetter, r *Record) {
	b.env.add(ev.GetEnvelope(), r)
	b.sourceTopic.add(ev.GetSourceTopic())
	b.sourcePartition.add(ev.GetSourcePartition())
	b.sourceOffset.add(ev.GetSourceOffset())
	b.sourceKey.add(string(ev.GetSourceKey()))
	b.sourcePayloadBytes.add(uint32(len(ev.GetPayload())))
	b.sourcePayloadSHA.add(sha256Hex(ev.GetPayload()))
	b.sourceTimestampNs.add(ev.GetSourceTimestampUnixNano())
	b.reason.add(ev.GetReason())
	b.reasonCode.add(int8(ev.GetReasonCode()))
	b.component.add(ev.GetComponent())
	b.messageType.add(ev.GetMessageType())
	b.rows++
}

// MaxBadPayload is how much of an undecodable record's value bad_records
// keeps verbatim; its full size and sha256 are always kept.
const MaxBadPayload = 64 << 10

type badBlock struct {
	Block
	topic            *strCol
	partition        *col[int32]
	offset           *col[int64]
	key, payload     *strCol
	payloadBytes     *col[uint32]
	payloadSHA       *strCol
	payloadTruncated *col[uint8]
	kafkaTimestamp   *col[int64]
	reason           *strCol
	reasonCode       *col[int8]
	messageType      *strCol
	recordedAt       *col[int64]
}

func newBadBlock() *badBlock {
	b := &badBlock{Block: Block{table: TableBadRecords}}
	b.topic = newStrCol(&b.Block, "topic")
	b.partition = newCol[int32](&b.Block, "partition")
	b.offset = newCol[int64](&b.Block, "offset")
	b.key = newStrCol(&b.Block, "key")
	b.payload = newStrCol(&b.Block, "payload")
	b.payloadBytes = newCol[uint32](&b.Block, "payload_bytes")
	b.payloadSHA = newStrCol(&b.Block, "payload_sha256")
	b.payloadTruncated = newCol[uint8](&b.Block, "payload_truncated")
	b.kafkaTimestamp = newCol[int64](&b.Block, "kafka_timestamp")
	b.reason = newStrCol(&b.Block, "reason")
	b.reasonCode = newCol[int8](&b.Block, "reason_code")
	b.messageType = newStrCol(&b.Block, "message_type")
	b.recordedAt = newCol[int64](&b.Block, "recorded_at")
	return b
}

func (b *badBlock) add(r *Record, messageType string, reason string, code eventspb.ReasonCode) {
	b.topic.add(r.Topic)
	b.partition.add(r.Partition)
	b.offset.add(r.Offset)
	b.key.add(string(r.Key))
	p := r.Value
	b.payloadTruncated.add(b2u(len(p) > MaxBadPayload))
	if len(p) > MaxBadPayload {
		p = p[:MaxBadPayload]
	}
	b.payload.add(string(p))
	b.payloadBytes.add(uint32(len(r.Value)))
	b.payloadSHA.add(sha256Hex(r.Value))
	b.kafkaTimestamp.add(timeSeconds(r.Timestamp))
	b.reason.add(reason)
	b.reasonCode.add(int8(code))
	b.messageType.add(messageType)
	b.recordedAt.add(timeSeconds(r.RecordedAt))
	b.rows++
}

// eventLogBlock is the raw archive of the joiner's input records.
type eventLogBlock struct {
	Block
	topic            *strCol
	partition        *col[int32]
	offset           *col[int64]
	key, value       *strCol
	kafkaTimestamp   *col[int64]
	kafkaTimestampNs *col[int64]
	recordedAt       *col[int64]
}

func newEventLogBlock() *eventLogBlock {
	b := &eventLogBlock{Block: Block{table: TableEventLog}}
	b.topic = newStrCol(&b.Block, "topic")
	b.partition = newCol[int32](&b.Block, "partition")
	b.offset = newCol[int64](&b.Block, "offset")
	b.key = newStrCol(&b.Block, "key")
	b.value = newStrCol(&b.Block, "value")
	b.kafkaTimestamp = newCol[int64](&b.Block, "kafka_timestamp")
	b.kafkaTimestampNs = newCol[int64](&b.Block, "kafka_timestamp_ns")
	b.recordedAt = newCol[int64](&b.Block, "recorded_at")
	return b
}

func (b *eventLogBlock) add(r *Record) {
	b.topic.add(r.Topic)
	b.partition.add(r.Partition)
	b.offset.add(r.Offset)
	b.key.add(string(r.Key))
	b.value.add(string(r.Value))
	b.kafkaTimestamp.add(timeSeconds(r.Timestamp))
	b.kafkaTimestampNs.add(r.Timestamp.UnixNano())
	b.recordedAt.add(timeSeconds(r.RecordedAt))
	b.rows++
}
