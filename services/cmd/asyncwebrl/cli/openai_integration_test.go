package cli

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/analytics/analyticstest"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
)

// TestIntegrationOpenAIPipeline is the openai backend end to end, the short
// version of the 100-episode drive: `-target=all -policy-backend=openai`
// against llama.cpp's server with SmolLM2-135M (infra/lm-server.sh) on
// real MiniWoB++ pages, the real broker and ClickHouse. Every action the
// model chose carries its reply's tokens and log-probs, the joiner turns
// the episodes into transitions, and the learner schedules without
// training (no weights are published).
//
// The run is stopped with SIGTERM once ClickHouse holds two ended episodes
// and a joined transition, not after a fixed time: on a loaded machine
// (CI beside an evaluation on 2 cores) the model server answered nothing
// within a 75 s run (12-07), and a slower machine should wait longer
// rather than fail. -duration is the ceiling only.
func TestIntegrationOpenAIPipeline(t *testing.T) {
	testenv.Parallel(t)
	lmURL, lmModel := testenv.LMServer(t)
	miniwob := testenv.MiniWoBDir(t)
	r := startAllTargets(t, "openai", "openai",
		"-miniwob-dir="+miniwob, "-suite=miniwob", "-families=miniwob/click-test,miniwob/click-button,miniwob/focus-text",
		"-policy-backend=openai", "-openai-base-url="+lmURL, "-openai-model="+lmModel,
		"-instance-id=openai-test", "-duration=8m", "-executors=2", "-in-flight=4", "-stop-timeout=90s")
	p, db := r.p, r.db
	cfg := analyticstest.Config(t, db)
	deadline := time.After(10 * time.Minute)
	for stopped := false; ; {
		select {
		case <-p.Done:
		case <-time.After(5 * time.Second):
			if !stopped && enough(cfg, 2, 1) {
				if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				stopped = true
			}
			continue
		case <-deadline:
			t.Fatal("the run did not end within 10 minutes")
		}
		break
	}
	if p.Err != nil {
		t.Fatalf("exit: %v", p.Err)
	}
	for _, line := range []string{"stopped cleanly", "training off", "policy backend: a model behind an OpenAI-compatible server"} {
		if !p.LogContains(t, line) {
			t.Errorf("log lacks %q", line)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var actions, withTokens, invalid, episodes, transitions, weights, learnerDead uint64
	var meanLatency float64
	q := fmt.Sprintf(`SELECT count(), countIf(lm_backend = 'openai' AND lm_output_tokens > 0 AND lm_model = '%s'), countIf(lm_invalid = 1), avg(lm_latency_ms)
		FROM %s.actions WHERE policy_name != 'oracle'`, lmModel, db)
	if err := conn.QueryRow(ctx, q).Scan(&actions, &withTokens, &invalid, &meanLatency); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sql string
		n   *uint64
	}{
		{fmt.Sprintf("SELECT uniqExact(episode_id) FROM %s.rewards WHERE done", db), &episodes},
		{fmt.Sprintf("SELECT count() FROM %s.transitions", db), &transitions},
		{fmt.Sprintf("SELECT count() FROM %s.weights", db), &weights},
		{fmt.Sprintf("SELECT count() FROM %s.dead_letters WHERE component = 'learner'", db), &learnerDead},
	} {
		if err := conn.QueryRow(ctx, c.sql).Scan(c.n); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d model actions (%d with tokens, %d invalid replies, mean request %.0f ms), %d episodes, %d transitions, %d weights versions",
		actions, withTokens, invalid, meanLatency, episodes, transitions, weights)
	if actions == 0 || withTokens != actions {
		t.Errorf("%d of %d model actions carry the reply's tokens and log-probs", withTokens, actions)
	}
	if episodes == 0 || transitions == 0 {
		t.Errorf("%d episodes ended, %d transitions joined", episodes, transitions)
	}
	if learnerDead != 0 {
		t.Errorf("the learner dead-lettered %d of the model's steps: a learner that does not train must not map them", learnerDead)
	}
	if weights != 0 {
		t.Errorf("%d weights versions published: the learner of a served model must not train", weights)
	}
}

// enough reports whether cfg's database holds at least episodes ended episodes
// and transitions joined transitions; false while the recorder has not
// created its tables yet.
func enough(cfg analytics.Config, episodes, transitions uint64) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		return false
	}
	defer conn.Close()
	var e, tr uint64
	q := fmt.Sprintf("SELECT (SELECT uniqExact(episode_id) FROM %[1]s.rewards WHERE done), (SELECT count() FROM %[1]s.transitions)", cfg.Database)
	if err := conn.QueryRow(ctx, q).Scan(&e, &tr); err != nil {
		return false
	}
	return e >= episodes && tr >= transitions
}
