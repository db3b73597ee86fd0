// Package policyaudit is `asyncwebrl policy audit`: it replays every
// built-in family's scripted solution in real Chromium, step by step as a
// demonstration takes it (actor.DemoActions), shows each page to the
// policy as an actor would (actor.ObservationEvent, policy.Featurize) and
// asks the policy's heads for the step (Architecture.ChoiceOf). A step they
// cannot express is listed with its reason: what the agent cannot do, task
// by task, before anyone trains it. MiniWoB++ tasks have no scripted
// solutions outside the tests yet and are listed as such.
package policyaudit
