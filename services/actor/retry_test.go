package actor

import (
	"io"
	"log/slog"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// A lost episode's task is queued again with an attempt's episode id, up
// to the retries allowed; then it is given up. Every attempt names the
// first episode's id; a generator task without an id gets one.
func TestRetryLater(t *testing.T) {
	m, err := newMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	o := defaultOptions()
	s := &Service{opts: o, log: slog.New(slog.NewTextHandler(io.Discard, nil)), m: m, pool: &pool{slots: make([]*slot, 1)}}
	x := newExecutor(s, 0)
	task := &eventspb.Task{Envelope: &eventspb.Envelope{EpisodeId: "ep-1"}, Family: "login-form", Site: "aurora", Seed: 42}

	attempt := 0
	var ids []string
	for {
		x.retryLater(task, attempt)
		if x.retry == nil {
			break
		}
		task, x.retry = x.retry, nil
		if got := retryAttempt(task); got != attempt+1 {
			t.Fatalf("attempt %d after %d", got, attempt)
		}
		if task.GetFamily() != "login-form" || task.GetSite() != "aurora" || task.GetSeed() != 42 {
			t.Fatalf("retried task %v changed", task)
		}
		attempt = retryAttempt(task)
		ids = append(ids, task.GetEnvelope().GetEpisodeId())
	}
	if len(ids) != 2 || ids[0] != "ep-1~retry1" || ids[1] != "ep-1~retry2" {
		t.Errorf("attempts %q, want ep-1~retry1, ep-1~retry2 (the default 2 retries)", ids)
	}
	if st := s.c.snapshot(); st.Retried != 2 || st.GaveUp != 1 {
		t.Errorf("retried %d, given up %d; want 2 and 1", st.Retried, st.GaveUp)
	}

	x.retryLater(&eventspb.Task{Family: "click-button", Seed: 7}, 0)
	if id := x.retry.GetEnvelope().GetEpisodeId(); firstEpisodeID(id) == "" || retryAttempt(x.retry) != 1 {
		t.Errorf("a generator task's retry has id %q", id)
	}

	s.opts.crashRetries, x.retry = 0, nil
	x.retryLater(task, 0)
	if x.retry != nil {
		t.Error("retried with -crash-retries 0")
	}
	for id, want := range map[string]string{"a~retry3": "a", "a~retryx": "a~retryx", "a": "a", "a~retry1~retry2": "a~retry1"} {
		if got := firstEpisodeID(id); got != want {
			t.Errorf("firstEpisodeID(%q) = %q, want %q", id, got, want)
		}
	}
}
