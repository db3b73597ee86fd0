// Package oracle holds the scripted solver of every webenv family and the
// random policy. The solver reads a task's solution from webenv's generator
// (the same one the server uses for the page and the scoring) and acts only
// through env.Step; each episode yields a demonstration — the (observation,
// action) pairs — for behaviour cloning. The random policy acts uniformly
// over the visible elements and is the floor that learning must beat.
package oracle
