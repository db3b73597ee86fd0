// Package webenv owns AsyncWebRL's local suite of seeded web tasks: the HTTP
// server (an app.Service) that serves the task pages, the generator of each
// built-in family (registered by name against its row in the task catalogue,
// services/internal/catalog, which holds the families' metadata, the sites,
// the train/test split and the MiniWoB++ table), the rubric scoring with its
// switchable shaping terms, the latency profiles (server delay per request and
// client-side asynchronous loading), the embedded page core that speaks the
// MiniWoB page protocol, the mounting of a directory of third-party
// MiniWoB-style pages, and the MiniWoB++ suite: the benchmark's own pages
// served as published (miniwob.go).
//
// Every problem is generated on the server, in Go, from (family, site, seed):
// the page asks the server for its problem when the harness starts an episode
// (core.startEpisodeReal after Math.seedrandom), so the scoring, the oracle
// (package oracle) and the page share one generator. Scoring is on the server
// too: the page core reports the user's inputs and clicks, multi-page sites
// keep their state per episode, and the rubric's facts are evaluated on that
// state. The page exposes the MiniWoB globals (WOB_REWARD_GLOBAL,
// WOB_RAW_REWARD_GLOBAL, WOB_DONE_GLOBAL, ...) plus WOB_REWARD_INFO, which
// carries the rubric: the facts met, the partial credit and the success.
//
// The env API that actors use lives in the sub-package env; the scripted
// solver and the random policy live in oracle.
package webenv
