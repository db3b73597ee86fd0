package kafka

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kgo"
)

// slogLogger adapts slog to kgo.Logger. franz-go logs at info on every
// group join and metadata change; that is useful to ops, so it maps 1:1.
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

func (s slogLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
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
