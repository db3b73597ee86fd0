// Package catalog is AsyncWebRL's catalogue of tasks: what a task is, not
// how it is served. It holds the built-in families (name, tier,
// description, viewport, time limit) as one table, the four sites and the
// deterministic train/test split by site, the tiers and their step budgets,
// the suites (built-in, MiniWoB++, all), the MiniWoB++ task table with its
// train/test split by disjoint seed ranges and the published per-task
// scores, the families a suite schedules, and the listing and printing of
// all of them.
//
// It is a leaf: it imports only the standard library, so that the
// learner, the reporter, replay, the actor and the CLI read task metadata
// without linking the task server. The page generators, the rubric, the
// shaping terms, the HTTP server and the mounting of MiniWoB++ and
// third-party pages live in services/webenv, which registers one generator
// per family of this table (a webenv test fails when the two disagree).
package catalog
