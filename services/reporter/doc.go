// Package reporter is the reporter target of the main job: while a run
// trains it prints progress (episodes/s, success by tier on held-out and
// training sites, policy version, consumer lag), and when it stops it
// writes a markdown report and a PNG learning curve into the run
// directory. It reads only topics: the episodes summaries, the weights
// versions and the actions (whose policy versions time the propagation of
// new weights to the actors).
package reporter
