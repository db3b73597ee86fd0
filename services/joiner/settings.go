package joiner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Settings are the knobs of the join. Two joins with the same Settings over
// the same history produce the same transitions, byte for byte (except
// timings.join_ms, which measures the joiner itself).
type Settings struct {
	// Window is the late window W: how far behind its topic's newest event
	// an event may arrive, and how far apart in event time the pieces of
	// one step may be.
	Window time.Duration
	// MaxStaleness is K: an action whose policy version is more than K
	// behind the newest version seen on its partition's actions is
	// dead-lettered as STALE. 0 turns the bound off.
	MaxStaleness uint64
	// MinStability raises the bar of a stable state: a frame is a state
	// only when the actor called it stable and its stability score is at
	// least this (0: the actor's flag alone). Replaying history with a
	// higher bar shows what a stricter detector would have trained on.
	MinStability float64
	// RawReward joins the environment's raw reward (success only, no
	// shaping terms) instead of the shaped one the actor recorded.
	RawReward bool
}

// DefaultSettings returns a 30s late window and no staleness bound.
func DefaultSettings() Settings {
	return Settings{Window: 30 * time.Second}
}

// Validate rejects settings the join cannot honour.
func (s Settings) Validate() error {
	if s.Window <= 0 {
		return fmt.Errorf("invalid late window %s: must be positive", s.Window)
	}
	if s.MinStability < 0 || s.MinStability > 1 {
		return fmt.Errorf("invalid minimum stability %v: want 0..1", s.MinStability)
	}
	return nil
}

// semantics names the join rules; bump it when a rule changes so that
// transitions built by different rules never share event ids.
const semantics = "join/v1"

// Fingerprint identifies the settings and join rules in output event ids and
// in the producer field of every output envelope.
func (s Settings) Fingerprint() string {
	b := fmt.Appendf(nil, "%s|window=%d|stale=%d", semantics, s.Window.Nanoseconds(), s.MaxStaleness)
	// Appended only when set, so the default settings keep their ids.
	if s.MinStability > 0 {
		b = fmt.Appendf(b, "|minstab=%g", s.MinStability)
	}
	if s.RawReward {
		b = append(b, "|raw_reward"...)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:4])
}
