package cmdkit

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// UsageError marks errors that are the user's to fix (exit 2).
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }
func (u UsageError) Unwrap() error { return u.Err }

// Usage marks err as the user's to fix.
func Usage(err error) error { return UsageError{err} }

// HelpAsked reports whether the first argument asks for help (-help,
// --help or -h).
func HelpAsked(args []string) bool {
	return len(args) > 0 && (args[0] == "-help" || args[0] == "--help" || args[0] == "-h")
}

// Parse parses the binary's flags and ASYNCWEBRL_* variables; a bad one is
// a usage error, -help prints the flags to stderr and returns flag.ErrHelp.
func Parse(args []string, stderr io.Writer) (*config.Config, error) {
	cfg, err := config.Parse(args, os.Getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, Usage(err)
	}
	return cfg, nil
}

// NewLogger is the logger -log-level and -log-format ask for, on w.
func NewLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// Catalog is the catalog under prefix with cfg's partitions and
// replication.
func Catalog(cfg *config.Config, prefix string) *topics.Catalog {
	return topics.New(topics.WithPrefix(prefix), topics.WithPartitions(int32(cfg.TopicPartitions)), topics.WithReplication(int16(cfg.TopicReplication)))
}

// ClickHouse is the one place the ClickHouse password is revealed.
func ClickHouse(c *config.Config) analytics.Config {
	return analytics.Config{
		Addr:     c.ClickHouse.Addr,
		Database: c.ClickHouse.Database,
		Username: c.ClickHouse.User,
		Password: c.ClickHouse.Password.Reveal(),
	}
}

// RandomID is 8 hex digits: a benchmark's or a drill's topics and groups
// are its own.
func RandomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
