// Package cpuset gives the learner's training thread a core of its own:
// the rest of the process (actors, their Chromium children, the joiner)
// is pinned to the other cores, so that the machine's split between
// learning and acting is a setting, the same in async and sync runs,
// rather than whatever the scheduler does (issue 38).
package cpuset
