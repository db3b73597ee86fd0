// Package backend builds the policy backend -policy-backend names, once for
// every command that runs actors (the actor target, replay eval): nothing
// for features (the actor's own inference server), the openai backend's
// client and Policy otherwise.
package backend
