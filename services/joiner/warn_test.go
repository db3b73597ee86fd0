package joiner

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

// chanHandler hands log records to a channel, dropping them when it is
// full: a blocking handler would stall the warner inside log.Warn, where it
// can never see stop.
type chanHandler struct{ ch chan slog.Record }

func (h chanHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h chanHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h.ch <- r:
	default:
	}
	return nil
}
func (h chanHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h chanHandler) WithGroup(string) slog.Handler      { return h }

// TestWarnWhileReportsTheWait: a blocking wait (a restore that waits for
// the changelog's end) says what it waits for until it ends, then stops.
func TestWarnWhileReportsTheWait(t *testing.T) {
	h := chanHandler{ch: make(chan slog.Record, 1000)}
	stop := warnWhile(slog.New(h), time.Millisecond, "still waiting", func() []any { return []any{"partitions", []int32{4, 5}} })
	r := <-h.ch // blocks until the first warning: a silent wait hangs here
	stop()
	if r.Level != slog.LevelWarn || r.Message != "still waiting" {
		t.Fatalf("got %v %q, want a warning saying what is awaited", r.Level, r.Message)
	}
	var parts string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "partitions" {
			parts = a.Value.String()
		}
		return true
	})
	if parts != "[4 5]" {
		t.Fatalf("the warning names partitions %q, want [4 5]", parts)
	}
	// stop returns once the warner is gone: nothing is logged after it.
	n := len(h.ch)
	for range n {
		<-h.ch
	}
	if len(h.ch) != 0 {
		t.Fatal("warnings logged after stop returned")
	}
}
