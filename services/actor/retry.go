package actor

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// Retry instead of drop. An episode a crashed browser or a lost tab cut
// short is recorded as aborted (never training data) and its task, the
// same family, site and seed, runs again on the executor's fresh tab
// before the next assignment, up to WithCrashRetries times. Why: dropping
// them biases training toward the tasks whose pages do not crash the
// browser (tinker-cookbook PR #497 retries on a fresh environment for the
// same reason). A page error with a live tab is the task's own failure and
// is not retried.

// retrySuffix joins a retried episode's id to its attempt:
// "<first episode's id>~retry<n>", so every attempt is its own episode for
// the joiner and ClickHouse, and the first one's id names them all.
const retrySuffix = "~retry"

// retryTask is the task of attempt n (1..) after a lost episode of task:
// the same assignment with its own episode id.
func retryTask(task *eventspb.Task, n int) *eventspb.Task {
	return withEpisodeID(task, firstEpisodeID(task.GetEnvelope().GetEpisodeId())+retrySuffix+strconv.Itoa(n))
}

// withEpisodeID is a copy of task whose envelope names episode id.
func withEpisodeID(task *eventspb.Task, id string) *eventspb.Task {
	t := proto.Clone(task).(*eventspb.Task)
	if t.Envelope == nil {
		t.Envelope = &eventspb.Envelope{}
	}
	t.Envelope.EpisodeId = id
	return t
}

// splitRetry splits an episode id into the first attempt's id and the
// attempt it names (0: the first).
func splitRetry(id string) (first string, attempt int) {
	if i := strings.LastIndex(id, retrySuffix); i >= 0 {
		if n, err := strconv.Atoi(id[i+len(retrySuffix):]); err == nil && n >= 0 {
			return id[:i], n
		}
	}
	return id, 0
}

// firstEpisodeID strips an attempt's suffix.
func firstEpisodeID(id string) string { first, _ := splitRetry(id); return first }

// retryAttempt is the attempt a task's episode id says it is (0: the
// first).
func retryAttempt(task *eventspb.Task) int { return retryAttemptOf(task.GetEnvelope().GetEpisodeId()) }

// retryAttemptOf is the attempt an episode id says it is.
func retryAttemptOf(id string) int { _, n := splitRetry(id); return n }

// retryLater queues the task of a lost episode (attempt: its run) for the
// executor's next episode, or counts it given up after the last retry. A
// task without an episode id (the local generator's) gets one, so that
// its attempts share it.
func (x *executor) retryLater(task *eventspb.Task, attempt int) {
	if task == nil || x.s.opts.crashRetries <= 0 {
		return
	}
	if attempt >= x.s.opts.crashRetries {
		x.s.c.gaveUp.Add(1)
		x.s.m.retries.WithLabelValues("given_up").Inc()
		x.s.log.Warn("episode lost again: its task is given up", "executor", x.idx, "family", task.GetFamily(), "seed", task.GetSeed(), "attempts", attempt+1)
		return
	}
	if task.GetEnvelope().GetEpisodeId() == "" {
		task = withEpisodeID(task, eventspb.NewEventID()) // begin names it; a guard
	}
	x.retry = retryTask(task, attempt+1)
	x.s.c.retried.Add(1)
	x.s.m.retries.WithLabelValues("retried").Inc()
}
