package actor

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/joiner"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// TestIntegrationBrowserCrash kills one of two Chromium processes mid-run
// (kill -9, as the OOM killer would): its executors record their episodes
// as aborted, the browser is restarted, the executors go on with new
// episodes, and after Stop no process of any browser generation is left.
func TestIntegrationBrowserCrash(t *testing.T) {
	srv := startWebenv(t, "none")
	k := newKafkaEnv(t, srv.URL())
	a := k.startActor(t, WithExecutors(4), WithBrowsers(2),
		WithTaskGrace(time.Second), WithMaxSteps(5), WithFamilies("click-button", "tick-checkboxes", "login-form"))
	rctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := &events{}
	k.consume(t, rctx, ev)

	var seen []BrowserInfo
	seen = append(seen, a.Browsers()...)
	waitUntil(t, 3*time.Minute, "4 episodes", func() bool { return a.Stats().Episodes >= 4 })
	victim := a.Browsers()[0]
	if victim.PID <= 0 {
		t.Fatalf("no pid for browser 0: %+v", victim)
	}
	before := a.Stats()
	killedAt := time.Now().UnixNano()
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 3*time.Minute, "the restart", func() bool {
		b := a.Browsers()[0]
		return b.Generation > victim.Generation && b.PID != victim.PID
	})
	seen = append(seen, a.Browsers()...)
	// Executors 0 and 2 live in browser 0: both must finish episodes
	// after the crash.
	waitUntil(t, 3*time.Minute, "episodes of executors 0 and 2 after the crash", func() bool {
		ev.mu.Lock()
		defer ev.mu.Unlock()
		after := map[string]bool{}
		for _, r := range ev.rewards {
			p := r.GetEnvelope().GetProducer()
			if r.GetDone() && !r.GetAborted() && r.GetEnvelope().GetProducedAtUnixNano() > killedAt &&
				(strings.HasSuffix(p, "/executor-0") || strings.HasSuffix(p, "/executor-2")) {
				after[p] = true
			}
		}
		return len(after) == 2
	})
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := a.Stats()
	if st.Restarts < 1 || st.Aborted <= before.Aborted {
		t.Fatalf("restarts %d, aborted %d -> %d: want a restart and aborted episodes", st.Restarts, before.Aborted, st.Aborted)
	}
	waitUntil(t, time.Minute, "every event read back", func() bool {
		o, ac, r, te := ev.counts()
		return uint64(o+ac+r+te) >= st.Produced
	})
	ev.mu.Lock()
	crashed := 0
	// Each crash-cut episode's task ran again (WithCrashRetries, default
	// 2): an episode "<id>~retry1" that ended, with observations, so the
	// joiner makes transitions of it as of any other.
	ended, observed := map[string]bool{}, map[string]bool{}
	for _, r := range ev.rewards {
		if r.GetDone() && !r.GetAborted() {
			ended[r.GetEnvelope().GetEpisodeId()] = true
		}
	}
	for _, o := range ev.obs {
		observed[o.GetEnvelope().GetEpisodeId()] = true
	}
	task := map[string]*eventspb.TaskRef{}
	for _, o := range ev.obs {
		task[o.GetEnvelope().GetEpisodeId()] = o.GetTask()
	}
	var retried []string
	cutOf := map[string]string{} // retried episode -> the crash-cut one it ran again
	for _, r := range ev.rewards {
		p := r.GetEnvelope().GetProducer()
		if r.GetAborted() && r.GetDone() && strings.HasPrefix(r.GetReason(), "crash") &&
			(strings.HasSuffix(p, "executor-0") || strings.HasSuffix(p, "executor-2")) {
			crashed++
			id := r.GetEnvelope().GetEpisodeId()
			next := firstEpisodeID(id) + retrySuffix + fmt.Sprint(retryAttemptOf(id)+1)
			if ended[next] && observed[next] {
				retried = append(retried, next)
				cutOf[next] = id
			}
		}
	}
	ev.mu.Unlock()
	if crashed == 0 {
		t.Fatal("no aborted reward with reason crash from the executors of the killed browser")
	}
	if len(retried) == 0 || st.Retried == 0 {
		t.Fatalf("no crash-cut episode was retried to its end (%d crash-cut, stats retried %d, given up %d)", crashed, st.Retried, st.GaveUp)
	}
	t.Logf("retried to the end: %v", retried)
	// Trained on: the real joiner, run over what the actor published, makes
	// each retried episode into transitions on the topic the learner reads,
	// ending in a terminal one, on the crash-cut episode's task and seed; the
	// crash-cut episode itself never ends in a transition.
	joined := joinTransitions(t, k, retried)
	for _, id := range retried {
		cut, again := task[cutOf[id]], task[id]
		if cut != nil && (again.GetTaskId() != cut.GetTaskId() || again.GetFamily() != cut.GetFamily() || again.GetSeed() != cut.GetSeed() || again.GetSite() != cut.GetSite()) {
			t.Errorf("retry %s ran task %s (%s seed %d), the crash-cut episode %s ran task %s (%s seed %d)", id, again.GetTaskId(), again.GetFamily(), again.GetSeed(), cutOf[id], cut.GetTaskId(), cut.GetFamily(), cut.GetSeed())
		}
		for _, tr := range joined[cutOf[id]] {
			if tr.GetDone() {
				t.Errorf("the crash-cut episode %s ended in a transition (step %d): training would see the crash as the task's end", cutOf[id], tr.GetStep())
			}
		}
		t.Logf("retry %s of %s (task %s, %s seed %d; the cut episode observed: %v): %d transitions on the replay topic", id, cutOf[id], again.GetTaskId(), again.GetFamily(), again.GetSeed(), cut != nil, len(joined[id]))
	}
	if left := leftover(seen); left != "" {
		t.Fatalf("chromium processes outlived the actor: %s", left)
	}
	for _, b := range seen {
		if _, err := os.Stat(b.DataDir); err == nil {
			t.Fatalf("user-data dir %s outlived its browser", b.DataDir)
		}
	}
	t.Logf("%d crash-aborted episodes; stats %+v", crashed, st)
}

// TestIntegrationNoOrphansAfterKill9 starts a browser pool in a child
// process, kills the child with SIGKILL (no cleanup runs) and checks that
// no Chromium process of its pool survives it.
func TestIntegrationNoOrphansAfterKill9(t *testing.T) {
	if os.Getenv("ASYNCWEBRL_ACTOR_CHILD") == "1" {
		runPoolChild()
		return
	}
	testenv.Integration(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestIntegrationNoOrphansAfterKill9$")
	cmd.Env = append(os.Environ(), "ASYNCWEBRL_ACTOR_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var bs []BrowserInfo
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "BROWSER "); ok {
			var b BrowserInfo
			if _, err := fmt.Sscanf(rest, "%d %s", &b.PID, &b.DataDir); err != nil {
				t.Fatalf("child line %q: %v", line, err)
			}
			bs = append(bs, b)
		}
		if line == "READY" {
			break
		}
	}
	if len(bs) != 2 {
		t.Fatalf("child reported %d browsers, want 2", len(bs))
	}
	for _, b := range bs {
		// The main process, a zygote and a renderer at least.
		if n := len(processesOf(b.PID, b.DataDir)); n < 3 {
			t.Fatalf("%d processes of browser %d (%s) before the kill, want 3 or more", n, b.PID, b.DataDir)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// The kernel kills the browsers (Pdeathsig); their helpers follow
	// once their browser is gone.
	waitUntil(t, time.Minute, "every chromium process of the killed actor to exit", func() bool { return leftover(bs) == "" })
	for _, b := range bs {
		_ = os.RemoveAll(b.DataDir) // nothing cleaned up after the kill
	}
}

// runPoolChild is the child of TestIntegrationNoOrphansAfterKill9: a pool
// of two browsers, each with an open tab, then it waits to be killed.
func runPoolChild() {
	ctx := context.Background()
	p, err := newPool(ctx, 2, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	if err != nil {
		os.Stdout.WriteString("ERROR " + err.Error() + "\n")
		os.Exit(1)
	}
	for i := range p.slots {
		b, _, _ := p.get(i)
		if _, err := env.New(ctx, b, "http://127.0.0.1:9/"); err != nil {
			os.Stdout.WriteString("ERROR " + err.Error() + "\n")
			os.Exit(1)
		}
		fmt.Fprintf(os.Stdout, "BROWSER %d %s\n", p.slots[i].pgid, b.DataDir())
	}
	os.Stdout.WriteString("READY\n")
	time.Sleep(10 * time.Minute)
}

// joinTransitions runs the real joiner over what the actor published to
// k and reads its transitions topic from the start until each of episodes
// has its terminal transition: what the learner trains on. It returns the
// transitions read, by episode.
func joinTransitions(t *testing.T, k *kafkaEnv, episodes []string) map[string][]*eventspb.Transition {
	t.Helper()
	j, err := joiner.New(k.cfg, k.factory, k.catalog, joiner.WithLogger(testLogger(t)), joiner.WithInstanceID("crash-test"))
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := j.Stop(ctx); err != nil {
			t.Errorf("unable to stop the joiner: %v", err)
		}
	}()
	cl, err := k.factory.NewClient("transitions-reader", kgo.ConsumeTopics(k.catalog.Name(topics.Transitions)),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	out := map[string][]*eventspb.Transition{}
	ended := func() bool {
		for _, id := range episodes {
			done := false
			for _, tr := range out[id] {
				done = done || tr.GetDone()
			}
			if !done {
				return false
			}
		}
		return true
	}
	deadline := time.Now().Add(3 * time.Minute) // a hang guard, not a timing assertion
	for !ended() {
		if time.Now().After(deadline) {
			t.Fatalf("the joiner made no terminal transition of every retried episode after 3m: %d episodes joined", len(out))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			tr, err := eventspb.DecodeTransition(r.Value)
			if err != nil {
				t.Errorf("undecodable transition: %v", kafka.NewRecordError(r, err))
				return
			}
			out[tr.GetEpisodeId()] = append(out[tr.GetEpisodeId()], tr)
		})
	}
	return out
}
