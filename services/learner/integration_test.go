package learner

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

func startLearner(t *testing.T, bin, dir, name string, seeds []string, prefix string) *testenv.Process {
	t.Helper()
	return testenv.Start(t, bin, dir, name, "-target=learner", "-brokers="+strings.Join(seeds, ","), "-topic-prefix="+prefix,
		"-instance-id="+name, "-admin-addr=127.0.0.1:0", "-run-dir="+dir, "-curriculum=false",
		"-batch-size=16", "-publish-every=3", "-stop-timeout=60s")
}

// transitions returns n synthetic click-button transitions in two-step
// episodes: the first step clicks a wrong button (reward 0), the second
// the right one (reward 1, done).
func syntheticTransitions(t *testing.T, n int, seed uint64) [][]byte {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	labels := []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot"}
	site := catalog.SitesOf("click-button", catalog.SplitTrain)[0]
	var out [][]byte
	for e := 0; len(out) < n; e++ {
		obs, act := easyPage(rng, labels)
		if act.GetType() != eventspb.ActionType_ACTION_TYPE_CLICK {
			continue
		}
		ep := fmt.Sprintf("ep-%d-%d", seed, e)
		wrong := &eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: "0", LogProb: -1.5}
		if act.GetBid() == "0" {
			wrong.Bid = "1"
		}
		act.LogProb = -1.5
		for step, a := range []*eventspb.Action{wrong, act} {
			a.Envelope = &eventspb.Envelope{Source: eventspb.Source_SOURCE_POLICY}
			next := "" // s_t+1 by reference (the learner never reads it)
			if step == 0 {
				next = fmt.Sprintf("%s.o1", ep)
			}
			tr := &eventspb.Transition{
				NextObsEventId: next, NextObsTopic: "obs",
				Envelope: eventspb.NewEnvelope("test"), EpisodeId: ep, Step: uint32(step), Obs: obs, Action: a,
				Reward: float64(step), Done: step == 1, Success: step == 1, LogProbOld: a.GetLogProb(),
				PolicyName: "default", Family: "click-button", Site: site, Tier: eventspb.Tier_TIER_EASY,
			}
			b, err := eventspb.Marshal(tr)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	return out
}

// publishedVersions reads every committed weights record, as the actors
// and a resuming learner read them (read committed).
func publishedVersions(ctx context.Context, t *testing.T, seeds []string, topic string) []*eventspb.Weights {
	t.Helper()
	return readWeights(ctx, t, seeds, topic, kgo.ReadCommitted())
}

// readWeights reads the weights topic to its end at isolation level iso:
// the last stable offset when read committed, the high watermark when not.
// Transaction markers are read too (and skipped): the end lies past the
// last one.
func readWeights(ctx context.Context, t *testing.T, seeds []string, topic string, iso kgo.IsolationLevel) []*eventspb.Weights {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(),
		kgo.FetchMaxBytes(80<<20), kgo.FetchMaxPartitionBytes(80<<20), kgo.BrokerMaxReadBytes(100<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	list := adm.ListEndOffsets
	if iso == kgo.ReadCommitted() {
		list = adm.ListCommittedOffsets
	}
	ends, err := list(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	end := int64(0)
	ends.Each(func(o kadm.ListedOffset) { end = o.Offset })
	var out []*eventspb.Weights
	for read := int64(0); read < end; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			read = r.Offset + 1
			if r.Attrs.IsControl() {
				return
			}
			w, err := eventspb.DecodeWeights(r.Value)
			if err != nil {
				t.Fatalf("undecodable weights at %d: %v", r.Offset, err)
			}
			out = append(out, w)
		})
	}
	return out
}

// TestIntegrationLearnerResumesAndDeadLetters runs the learner as a process
// on the real broker: bad records on the transitions topic go to the dlq
// with a reason while training goes on; after kill -9 and a restart the
// version sequence continues without a gap or a repeat.
func TestIntegrationLearnerResumesAndDeadLetters(t *testing.T) {
	kc := kafkatest.Real(t, "l", topics.WithPartitions(2))
	seeds, prefix, cat := kc.Seeds, kc.Catalog.Prefix, kc.Catalog
	admin := kc.Client(t, kgo.ProducerBatchMaxBytes(16<<20))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := testenv.Binary(t, dir)
	trTopic, wTopic := cat.Name(topics.Transitions), cat.Name(topics.Weights)
	produce := func(vals ...[]byte) {
		t.Helper()
		for _, v := range vals {
			admin.Produce(ctx, &kgo.Record{Topic: trTopic, Key: []byte("k"), Value: v}, nil)
		}
		if err := admin.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Bad data: undecodable bytes, and a transition whose frame is not an
	// image (it decodes, but cannot be featurized).
	badFrame := syntheticTransitions(t, 2, 99)[0]
	tr, _ := eventspb.DecodeTransition(badFrame)
	tr.Obs.Frame, tr.Obs.FrameFormat = []byte("not a png"), "png"
	badFrame, _ = eventspb.Marshal(tr)
	produce([]byte{0xff, 0x00, 0x13}, []byte("garbage"), badFrame)
	produce(syntheticTransitions(t, 300, 1)...)

	waitVersion := func(p *testenv.Process, atLeast uint64) []*eventspb.Weights {
		t.Helper()
		for {
			ws := publishedVersions(ctx, t, seeds, wTopic)
			if len(ws) > 0 && ws[len(ws)-1].GetVersion() >= atLeast {
				return ws
			}
			select {
			case <-p.Done:
				t.Fatalf("learner exited: %v", p.Err)
			case <-time.After(time.Second):
			}
		}
	}
	p1 := startLearner(t, bin, dir, "learner-a", seeds, prefix)
	waitVersion(p1, 3)
	if err := p1.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p1.Done
	before := publishedVersions(ctx, t, seeds, wTopic)
	t.Logf("killed with SIGKILL after version %d", before[len(before)-1].GetVersion())

	p2 := startLearner(t, bin, dir, "learner-b", seeds, prefix)
	produce(syntheticTransitions(t, 300, 2)...)
	last := before[len(before)-1].GetVersion()
	waitVersion(p2, last+2)
	if err := p2.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p2.Done
	if p2.Err != nil {
		t.Fatalf("learner did not stop cleanly on SIGTERM: %v", p2.Err)
	}
	all := publishedVersions(ctx, t, seeds, wTopic)
	var vs []uint64
	for i, w := range all {
		vs = append(vs, w.GetVersion())
		if w.GetVersion() != uint64(i+1) || w.GetParentVersion() != uint64(i) {
			t.Errorf("record %d: version %d parent %d, want %d and %d", i, w.GetVersion(), w.GetParentVersion(), i+1, i)
		}
		if len(w.GetOnnx()) == 0 || w.GetArchitecture() == "" || w.GetOnnxSha256() == "" {
			t.Errorf("version %d lacks its model, architecture or checksum", w.GetVersion())
		}
	}
	t.Logf("versions published across the kill: %v", vs)
	if !slices.Contains(vs, last+1) {
		t.Fatalf("no version after the kill: %v", vs)
	}
	if !p2.LogContains(t, `from="weights topic"`) && !p2.LogContains(t, "from=checkpoint") {
		t.Errorf("the restarted learner did not resume from the topic or the checkpoint")
	}

	// Every bad record is in the dlq, with the learner's reason.
	// A record the killed learner dead-lettered but had not committed is
	// dead-lettered again by its successor, under the same event id (it
	// is derived from the source offset), so the recorder keeps one.
	dl := deadLetters(ctx, t, seeds, cat.Name(topics.DLQ), 3)
	codes := map[eventspb.ReasonCode]int{}
	ids := map[string]bool{}
	for _, d := range dl {
		if ids[d.GetEnvelope().GetEventId()] {
			continue
		}
		ids[d.GetEnvelope().GetEventId()] = true
		if d.GetComponent() != "learner" || d.GetSourceTopic() != trTopic || d.GetReason() == "" {
			t.Errorf("dead letter %+v: want component learner, source %s and a reason", d, trTopic)
		}
		codes[d.GetReasonCode()]++
	}
	if codes[eventspb.ReasonCode_REASON_CODE_DECODE_ERROR] != 2 || codes[eventspb.ReasonCode_REASON_CODE_SCHEMA_INVALID] != 1 {
		t.Errorf("dead letters by code %v: want 2 decode errors and 1 wrong shape", codes)
	}
}

// deadLetters reads the dlq until it holds want records.
func deadLetters(ctx context.Context, t *testing.T, seeds []string, topic string, want int) []*eventspb.DeadLetter {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []*eventspb.DeadLetter
	for len(out) < want {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("dlq holds %d of %d dead letters: %v", len(out), want, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			d, err := eventspb.DecodeDeadLetter(r.Value)
			if err != nil {
				t.Fatalf("undecodable dead letter: %v", err)
			}
			out = append(out, d)
		})
	}
	return out
}

// TestIntegrationLearnerTrainsOffline trains from a transitions topic with
// no actors: every episode of the synthetic history is read, the policy is
// published as the first version of a new name, and with success-only only
// the successful episodes' steps are kept.
func TestIntegrationLearnerTrainsOffline(t *testing.T) {
	kc := kafkatest.Real(t, "lo", topics.WithPartitions(2))
	seeds, cat := kc.Seeds, kc.Catalog
	cl := kc.Client(t, kgo.ProducerBatchMaxBytes(16<<20))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	trs := syntheticTransitions(t, 200, 5) // 100 two-step episodes, all successful
	for _, v := range trs {
		cl.Produce(ctx, &kgo.Record{Topic: cat.Name(topics.Transitions), Key: []byte("k"), Value: v}, nil)
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]string{"-brokers=" + strings.Join(seeds, ",")}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	f := kafka.NewFactory(cfg, seeds, nil)
	svc, err := New(cfg, f, cat, WithPolicyName("offline-test"), WithBatchSize(16), WithReplayRatio(2))
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.TrainOffline(ctx, cat.Name(topics.Transitions), true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("offline: %d records, %d samples, %d updates, version %d in %s", res.Records, res.Samples, res.Updates, res.Version, res.Took)
	if res.Records != int64(len(trs)) || res.Samples != int64(len(trs)) || res.Version != 1 || len(res.ONNX) == 0 {
		t.Fatalf("offline training: %+v; want %d records and samples, version 1, a model", res, len(trs))
	}
	ws := publishedVersions(ctx, t, seeds, cat.Name(topics.Weights))
	if len(ws) != 1 || ws[0].GetPolicyName() != "offline-test" || ws[0].GetVersion() != 1 {
		t.Fatalf("published %d weights records; want version 1 of offline-test", len(ws))
	}
}
