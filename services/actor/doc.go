// Package actor owns the rollout side of AsyncWebRL: a pool of Chromium
// processes driven over the DevTools protocol (through webenv/env), the
// executors that run episodes in isolated browser contexts, the visual
// stability detector that decides when a frame is a state, the Policy seam
// the executors decide through (policy.go: by default the shared batching
// inference server of package policy, fed by every executor; WithPolicy
// for another backend), and the Kafka side: tasks in, weights in,
// obs/actions/rewards/telemetry out.
//
// # Executors and the two modes
//
// An executor is one tab in a browser context of its own (cookies, storage
// and cache are not shared), spread round robin over M Chromium processes.
// One episode step is begin (reset, a stable s_0) or think (featurize,
// inference, sampling; the action event goes out) then act (execute, wait
// for a stable s_t+1, the reward event goes out). In ModeAsync every
// executor chains its steps on its own, so while one waits for its page
// the others think and act and their inference requests meet in one
// batch. ModeSync, the strict baseline, runs the same steps in lock-step
// rounds (all act and settle, a barrier waits for the slowest page, all
// featurize, one batched inference decides for all) over batches of
// episodes that start together: an executor whose episode ended waits for
// the batch's longest one. ModeSyncStep restarts each executor's episodes
// independently, so it waits only for the slowest page of each round.
// Waiting at a barrier is idle time.
//
// # Events (key: episode id; telemetry: actor id)
//
//   - obs at step t for s_t: the wire frame (JPEG or PNG, boxes in its
//     pixels; services/internal/frame), elements set-of-marks style (bid, role, text, box,
//     checked, value, focused, disabled), the stable flag and score, and
//     with a frame store the hash of the full-resolution PNG (claim check:
//     RunDir/frames/<sha256>). Unstable frames are published too; decisions
//     are taken only on stable ones: an executor waits for its page again
//     (twice more) and aborts the episode if it never settles.
//   - actions at step t: a_t with log-prob, value, policy name and version,
//     the batch's inference time and size, and the obs event it was chosen
//     from.
//   - rewards at step t: r_t, published once s_t+1 is stable or the page is
//     done, so that a step that breaks in between is the aborted step.
//     Aborted rewards (done, aborted, reason "crash: ...", "unstable: ...",
//     "stopped: ...", "error: ...") end episodes that infrastructure broke;
//     the joiner never turns them into training data.
//   - telemetry: per executor and window, the time split observe / think /
//     act / wait / idle, with steps and episodes.
//
// Events are produced asynchronously by one idempotent, zstd-compressing
// franz-go producer. The envelope's producer is the executor
// ("<instance>/executor-<i>").
//
// # Stability
//
// Visual (an env.Settler) waits inside the page for calm (no request in
// flight, no navigation pending, no CSS animation running, the DOM quiet
// for Quiet), then compares two screenshots Interval apart (mean absolute
// pixel difference at most MaxDiff, no DOM mutation in between); the
// verdict's frame becomes the observation's. The text caret is hidden in
// the actor's tabs so that a focused field does not look like a change.
//
// # Browsers
//
// Chromium runs in a process group of its own with Pdeathsig=SIGKILL, so it
// dies with the actor even on kill -9 (its helpers follow: they exit when
// their browser's pipe closes); Close kills the group and sweeps /proc for
// any process still carrying the browser's --user-data-dir. Frame pacing is
// restored over env.LaunchBrowser's unpaced flags (options.unpaced). A
// supervisor restarts a browser whose DevTools connection drops or that
// fails a health check; the executors of that browser record their
// episodes as aborted ("crash") and open new tabs. Every tab intercepts its
// requests (DevTools Fetch domain) and fails those to origins outside the
// allowlist (default: the webenv origin) with BlockedByClient; they are
// counted (Stats.Blocked, asyncwebrl_actor_blocked_requests_total).
//
// # Weights and tasks
//
// At start the actor reads the compacted weights topic to its end and
// serves the newest version of its policy, or policy.InitialONNX (version
// 0) when none is published; newer versions are swapped in between batches
// while executors run. Tasks come from the tasks topic through a consumer
// group; when none has arrived for the grace period, a local generator
// supplies webenv's built-in families on their train sites with increasing
// seeds (WithSuite: the suite's tasks the action space can express, a
// MiniWoB++ task on its train seeds).
package actor
