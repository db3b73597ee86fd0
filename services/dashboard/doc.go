// Package dashboard is the dashboard target: a read-only web page, served on
// its own address, with the learning curve (success rate over time by tier),
// throughput, executor utilization and consumer lag charts. The page polls
// /api/charts every few seconds; the endpoint runs the saved queries of
// analytics/queries (the same SQL `asyncwebrl query` runs) and returns their
// rows as JSON. The page draws inline SVG with vanilla JavaScript, embedded
// in the binary: no external scripts, fonts or styles.
//
// /episodes is the episode view (episodes.go, static/episodes.html): pick a
// recorded episode by family or task, split, kind and success, and step
// through its frames (the frames table, served by hash from /api/frames),
// with the acted element's box outlined on a canvas, the action string, the
// reward and the stability score.
//
// Read-only by construction: the only SQL it can run is the embedded saved
// queries and the episode view's fixed statements, with bound parameters.
// ClickHouse is reached lazily, per request, so the page stays up (showing
// the error) while the server or the database is not there yet.
package dashboard
