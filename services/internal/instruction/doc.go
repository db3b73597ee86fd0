// Package instruction reads a task's instruction as both the policy's
// featurizer and the env's shaping do, so that the two agree on what the
// instruction asks for: today, its quoted phrases (the text a typing task
// wants typed).
package instruction
