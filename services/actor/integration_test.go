package actor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

type stepKey struct {
	episode string
	step    uint32
}

// TestIntegrationActorEvents runs 4 async executors against webenv on the
// real broker until at least 50 episodes have ended, publishing new weights
// midway, and checks the event stream: every event decodes under its
// episode key, every action's (episode, step) has an obs and a reward, the
// action was chosen on a stable obs of its step, the stamped policy version
// changes after the publish on every executor (none stopped), full frames
// sit in the frame store under their hash, and telemetry went out.
func TestIntegrationActorEvents(t *testing.T) {
	srv := startWebenv(t, "none")
	k := newKafkaEnv(t, srv.URL())
	frames := filepath.Join(t.TempDir(), "frames")
	a := k.startActor(t, WithExecutors(4), WithBrowsers(2),
		WithFrameStore(frames), WithTaskGrace(time.Second), WithMaxSteps(6),
		WithTelemetryWindow(2*time.Second), WithSampleSeed(1),
		WithFamilies("click-button", "click-link", "tick-checkboxes", "type-text", "login-form"))
	ctx := context.Background()
	if v := a.PolicyVersion(); v != 0 {
		t.Fatalf("version %d served with no weights published, want the initial policy (0)", v)
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ev := &events{}
	k.consume(t, rctx, ev)

	waitUntil(t, 5*time.Minute, "15 episodes", func() bool { return a.Stats().Episodes >= 15 })
	publishWeights(t, k, 1, 7)
	waitUntil(t, 2*time.Minute, "the swap", func() bool { return a.PolicyVersion() == 1 })
	// Every executor keeps acting under the new version.
	waitUntil(t, 5*time.Minute, "version 1 actions from every executor and 50 episodes", func() bool {
		ev.mu.Lock()
		by := map[string]bool{}
		for _, x := range ev.actions {
			if x.GetPolicyVersion() == 1 {
				by[x.GetEnvelope().GetProducer()] = true
			}
		}
		ev.mu.Unlock()
		return len(by) == 4 && a.Stats().Episodes >= 50
	})
	sctx, scancel := context.WithTimeout(ctx, time.Minute)
	defer scancel()
	if err := a.Stop(sctx); err != nil {
		t.Fatal(err)
	}
	st := a.Stats()
	// Read everything the actor produced.
	waitUntil(t, time.Minute, "every produced event to be read back", func() bool {
		o, ac, r, te := ev.counts()
		return uint64(o+ac+r+te) >= st.Produced
	})
	cancel()

	c := checkEvents(t, ev, st, frames)
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(c.doneEpisodes) < 50 {
		t.Fatalf("%d episodes ended (not aborted), want at least 50", len(c.doneEpisodes))
	}
	doneEpisodes := c.doneEpisodes
	versions := map[uint64]int{}
	for _, x := range ev.actions {
		versions[x.GetPolicyVersion()]++
	}
	if versions[0] == 0 || versions[1] == 0 || len(versions) != 2 {
		t.Fatalf("actions by version %v, want versions 0 and 1", versions)
	}
	var telSteps uint32
	execs := map[string]bool{}
	for _, m := range ev.tel {
		telSteps += m.GetSteps()
		execs[m.GetExecutorId()] = true
		if m.GetMode() != "async" {
			t.Fatalf("telemetry mode %q", m.GetMode())
		}
	}
	if len(execs) != 4 || uint64(telSteps) != st.Steps {
		t.Fatalf("telemetry from %d executors with %d steps, want 4 and %d", len(execs), telSteps, st.Steps)
	}
	t.Logf("%d episodes, %d steps, %d obs, %d actions (by version %v), %d rewards, %d telemetry; stats %+v",
		len(doneEpisodes), st.Steps, len(ev.obs), len(ev.actions), versions, len(ev.rewards), len(ev.tel), st)
}

// checked is what checkEvents found.
type checked struct {
	obsByID      map[string]*eventspb.Observation
	doneEpisodes map[string]bool
}

// checkEvents checks the stream: every event decoded under its episode key,
// wire frames within 128 pixels a side, task refs on the train split, every
// action's (episode, step) has an obs and exactly one reward, and the action
// was chosen on a stable obs of its own step. frames, when set, is the frame
// store every obs must have its full frame in.
func checkEvents(t *testing.T, ev *events, st Stats, frames string) checked {
	t.Helper()
	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.bad) > 0 {
		t.Fatalf("%d malformed records, first: %v", len(ev.bad), ev.bad[0])
	}
	if st.ProduceErrors != 0 {
		t.Fatalf("%d produce errors", st.ProduceErrors)
	}
	obsByID := map[string]*eventspb.Observation{}
	obsAt := map[stepKey]int{}
	hashes := 0
	for _, o := range ev.obs {
		obsByID[o.GetEnvelope().GetEventId()] = o
		obsAt[stepKey{o.GetEnvelope().GetEpisodeId(), o.GetEnvelope().GetStep()}]++
		if len(o.GetFrame()) == 0 || o.GetWidth() == 0 || o.GetWidth() > 128 || o.GetHeight() > 128 || o.GetFrameFormat() != "jpeg" {
			t.Fatalf("obs %s: frame %d bytes %dx%d %q, want a jpeg within 128x128", o.GetEnvelope().GetEventId(), len(o.GetFrame()), o.GetWidth(), o.GetHeight(), o.GetFrameFormat())
		}
		if o.GetTask().GetFamily() == "" || o.GetTask().GetSplit() != eventspb.Split_SPLIT_TRAIN {
			t.Fatalf("obs without a train task ref: %v", o.GetTask())
		}
		if o.GetStable() && o.GetStabilityScore() <= 0 {
			t.Fatalf("stable obs with score %v", o.GetStabilityScore())
		}
		if h := o.GetFullFrameHash(); h != "" && frames != "" {
			b, err := os.ReadFile(filepath.Join(frames, h))
			if err != nil {
				t.Fatalf("frame %s not in the store: %v", h, err)
			}
			sum := sha256.Sum256(b)
			if hex.EncodeToString(sum[:]) != h {
				t.Fatalf("frame %s has another hash", h)
			}
			hashes++
		}
	}
	if frames != "" && hashes != len(ev.obs) {
		t.Fatalf("%d of %d obs carry a full frame hash", hashes, len(ev.obs))
	}
	rewardAt := map[stepKey]*eventspb.Reward{}
	doneEpisodes := map[string]bool{}
	for _, r := range ev.rewards {
		key := stepKey{r.GetEnvelope().GetEpisodeId(), r.GetEnvelope().GetStep()}
		if _, dup := rewardAt[key]; dup {
			t.Fatalf("two rewards for %v", key)
		}
		rewardAt[key] = r
		if r.GetDone() && !r.GetAborted() {
			doneEpisodes[key.episode] = true
		}
	}
	for _, x := range ev.actions {
		key := stepKey{x.GetEnvelope().GetEpisodeId(), x.GetEnvelope().GetStep()}
		if obsAt[key] == 0 {
			t.Fatalf("action %v has no obs", key)
		}
		if rewardAt[key] == nil {
			t.Fatalf("action %v (%s) has no reward", key, x.GetRaw())
		}
		src := obsByID[x.GetObsEventId()]
		if src == nil || !src.GetStable() || src.GetEnvelope().GetStep() != key.step || src.GetEnvelope().GetEpisodeId() != key.episode {
			t.Fatalf("action %v was not chosen on a stable obs of its step: %v", key, src.GetEnvelope())
		}
		if x.GetPolicyName() != "default" || x.GetBatchSize() < 1 || x.GetRaw() == "" {
			t.Fatalf("action %v: policy %q batch %d raw %q", key, x.GetPolicyName(), x.GetBatchSize(), x.GetRaw())
		}
	}
	return checked{obsByID: obsByID, doneEpisodes: doneEpisodes}
}

// publishWeights publishes version of the default architecture with
// parameters drawn from seed.
func publishWeights(t *testing.T, k *kafkaEnv, version, seed uint64) {
	t.Helper()
	arch := policy.DefaultArchitecture()
	onnx, err := policy.WriteONNX(arch, arch.NewParams(seed))
	if err != nil {
		t.Fatal(err)
	}
	aj, err := arch.JSON()
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(onnx)
	w := &eventspb.Weights{Envelope: eventspb.NewEnvelope("test"), PolicyName: "default", Version: version,
		Onnx: onnx, Format: "onnx", OnnxSha256: hex.EncodeToString(sum[:]), Architecture: aj}
	b, err := eventspb.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := k.admin.ProduceSync(ctx, &kgo.Record{Topic: k.catalog.Name(topics.Weights), Key: []byte("default"), Value: b}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// leftover lists the processes still alive of any of the browsers (by
// process group and user-data dir).
func leftover(bs []BrowserInfo) string {
	var out []string
	for _, b := range bs {
		if pids := processesOf(b.PID, b.DataDir); len(pids) > 0 {
			out = append(out, fmt.Sprintf("group %d %s: %v", b.PID, b.DataDir, pids))
		}
	}
	return strings.Join(out, "; ")
}
