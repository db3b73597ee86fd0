package config

import "log/slog"

// Secret is a string that never prints: fmt, %v, %#v and slog all show
// "[redacted]" (or "" when empty, so an unset secret is visible as unset).
type Secret string

const redacted = "[redacted]"

// Reveal returns the secret's value for the one place that needs it (the
// client constructor). Never pass its result to a logger.
func (s Secret) Reveal() string { return string(s) }

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString covers %#v.
func (s Secret) GoString() string { return s.String() }

// LogValue covers slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText covers encoding/json and friends.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
