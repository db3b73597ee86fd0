package kafka

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// slogLogger adapts slog to kgo.Logger. franz-go logs at info on every
// group join and metadata change; that is useful to ops, so it maps 1:1,
// except the per-transaction messages (perTransaction).
type slogLogger struct{ l *slog.Logger }

// NewLogger returns a kgo.Logger writing to l (nil: discard).
func NewLogger(l *slog.Logger) kgo.Logger {
	if l == nil {
		return kgo.BasicLogger(nil, kgo.LogLevelNone, nil)
	}
	return slogLogger{l.With("component", "kgo")}
}

func (s slogLogger) Level() kgo.LogLevel {
	ctx := context.Background()
	switch {
	case s.l.Enabled(ctx, slog.LevelDebug):
		return kgo.LogLevelDebug
	case s.l.Enabled(ctx, slog.LevelInfo):
		return kgo.LogLevelInfo
	case s.l.Enabled(ctx, slog.LevelWarn):
		return kgo.LogLevelWarn
	default:
		return kgo.LogLevelError
	}
}

// perTransaction are franz-go's info messages of every transaction: a
// joiner commits several a second, so they are debug here, and the
// group, metadata and partition messages ops need stay at info.
var perTransaction = map[string]bool{
	"beginning transaction": true, "beginning transact session": true, "transaction session ending": true,
	"transact session successful, setting to newly committed state": true, "ending transaction": true,
	"end transaction response successfully received": true, "flushing": true,
}

func (s slogLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if level == kgo.LogLevelInfo && perTransaction[msg] {
		level = kgo.LogLevelDebug
	}
	var l slog.Level
	switch level {
	case kgo.LogLevelError:
		l = slog.LevelError
	case kgo.LogLevelWarn:
		l = slog.LevelWarn
	case kgo.LogLevelInfo:
		l = slog.LevelInfo
	default:
		l = slog.LevelDebug
	}
	s.l.Log(context.Background(), l, msg, keyvals...)
}
