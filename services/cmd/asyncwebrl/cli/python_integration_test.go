package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/infra/testenv/kafkatest"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// The Python side of issue 20: analytics/python's scripts, run by the
// venv's interpreter against the real broker, checked against what Go wrote
// and computed.

// pyScript is the path of a script in analytics/python.
func pyScript(t *testing.T, name string) string {
	return filepath.Join(testenv.RepoDir(t), "analytics", "python", name)
}

// runPython runs a script of analytics/python and returns its output.
func runPython(t *testing.T, py string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// pageFrame draws a wire frame, different for every seed:
// smooth colour gradients and, with boxes, coloured boxes with dark text
// bars (sharp edges, as on a page). JPEG frames get no boxes: decoders
// differ most at sharp colour edges (Pillow's libjpeg upsamples chroma
// smoothly, Go's image/jpeg does not), while on gradients a correct decoding
// is close to Go's and a wrong one (channels swapped, rows misread) is far.
func pageFrame(seed, w, h int, boxes bool) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, color.RGBA{uint8(40 + 3*x), uint8(30 + 4*y + seed), uint8(200 - 2*x - y), 255})
		}
	}
	for i := range 4 {
		if !boxes {
			break
		}
		x, y := (seed*7+i*13)%(w-16), (seed*5+i*11)%(h-10)
		c := color.RGBA{uint8(60 * i), uint8(200 - 40*i), uint8((seed * 50) % 256), 255}
		draw.Draw(img, image.Rect(x, y, x+16, y+10), &image.Uniform{c}, image.Point{}, draw.Src)
		draw.Draw(img, image.Rect(x+2, y+4, x+12, y+6), &image.Uniform{color.RGBA{20, 20, 20, 255}}, image.Point{}, draw.Src)
	}
	return img
}

// encodeFrame encodes img as the actor does (image/png, image/jpeg).
func encodeFrame(t *testing.T, img image.Image, format string) []byte {
	t.Helper()
	var b bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&b, img)
	} else {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 80})
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rgbOf decodes a frame with Go's decoders into packed RGB [H][W][3].
func rgbOf(t *testing.T, frame []byte) []byte {
	t.Helper()
	img, _, err := image.Decode(bytes.NewReader(frame))
	if err != nil {
		t.Fatal(err)
	}
	r := img.Bounds()
	out := make([]byte, 0, r.Dx()*r.Dy()*3)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			out = append(out, c.R, c.G, c.B)
		}
	}
	return out
}

// testObservation is an observation of episode ep at step with a frame
// of the given format.
func testObservation(t *testing.T, ep string, step, seed int, format string) *eventspb.Observation {
	env := eventspb.NewEnvelope("pytest")
	env.EpisodeId, env.Step = ep, uint32(step)
	const w, h = 64, 48 // not square: a transposed frame is caught
	return &eventspb.Observation{
		Envelope:    env,
		Task:        &eventspb.TaskRef{TaskId: "click-button/seed-" + ep, Family: "click-button", Site: "alpha", Split: eventspb.Split_SPLIT_TRAIN},
		Frame:       encodeFrame(t, pageFrame(seed, w, h, format == "png"), format),
		FrameFormat: format,
		Width:       w, Height: h,
		Instruction: fmt.Sprintf(`Click the "OK %d" button`, seed),
		Elements: []*eventspb.Element{
			{Bid: fmt.Sprintf("b%d", seed), Role: "button", Text: fmt.Sprintf("OK %d", seed), Box: &eventspb.Box{X: 4, Y: 6, W: 20, H: 10}},
			{Bid: "t1", Role: "textbox", Box: &eventspb.Box{X: 30, Y: 20, W: 30, H: 8}, Value: "hi"},
			{Bid: "l1", Role: "link", Text: "Cancel", Box: &eventspb.Box{X: 10, Y: 34, W: 16, H: 8}},
		},
		Stable: true, StabilityScore: 1,
	}
}

// TestIntegrationPythonTransitions produces transitions into a fresh topic
// on the real broker (committed, an aborted transaction, one undecodable
// record) and checks the batches analytics/python/transitions.py decodes
// against what was produced: the committed transitions only, each with its
// frame's pixels, elements, action, reward, log-prob and policy version.
func TestIntegrationPythonTransitions(t *testing.T) {
	py := testenv.Python(t)
	c := kafkatest.Real(t, "py")
	topic := c.Catalog.Name(topics.Transitions)

	type want struct {
		tr     *eventspb.Transition
		rgb    []byte
		format string
	}
	wants := map[string]want{} // by "episode/step"
	var committed, aborted []*kgo.Record
	for e := range 3 {
		ep := eventspb.NewEventID()
		const steps = 4
		for s := range steps {
			seed := e*10 + s
			format := []string{"png", "jpeg"}[(e+s)%2]
			obs := testObservation(t, ep, s, seed, format)
			env := eventspb.NewEnvelope("pytest")
			env.EpisodeId, env.Step = ep, uint32(s)
			bid := obs.Elements[s%len(obs.Elements)].Bid
			act := &eventspb.Action{Envelope: env, Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: bid, Raw: fmt.Sprintf("click(%q)", bid),
				ObsEventId: obs.Envelope.EventId, LogProb: -0.1 - float64(seed)/7, PolicyName: "default", PolicyVersion: uint64(3 + e)}
			tr := &eventspb.Transition{Envelope: env, EpisodeId: ep, Step: uint32(s), Obs: obs, Action: act,
				Reward: float64(seed) / 3, Done: s == steps-1, LogProbOld: act.LogProb, PolicyVersion: act.PolicyVersion, PolicyName: "default"}
			if !tr.Done {
				tr.NextObsEventId = eventspb.NewEventID()
			}
			b, err := eventspb.Marshal(tr)
			if err != nil {
				t.Fatal(err)
			}
			rec := &kgo.Record{Topic: topic, Key: []byte(ep), Value: b}
			if e == 2 && s >= 2 {
				aborted = append(aborted, rec) // never to be seen by a read_committed reader
				continue
			}
			committed = append(committed, rec)
			wants[fmt.Sprintf("%s/%d", ep, s)] = want{tr, rgbOf(t, obs.Frame), format}
		}
	}
	committed = append(committed, &kgo.Record{Topic: topic, Key: []byte("junk"), Value: []byte("not a transition")})

	// The joiner writes transitions in transactions; so does this test.
	prod := c.Client(t, kgo.TransactionalID(c.Catalog.Prefix+"pytest-tx"), kgo.ProducerBatchMaxBytes(4<<20))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, batch := range []struct {
		recs   []*kgo.Record
		commit kgo.TransactionEndTry
	}{{committed, kgo.TryCommit}, {aborted, kgo.TryAbort}} {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := prod.ProduceSync(ctx, batch.recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := prod.EndTransaction(ctx, batch.commit); err != nil {
			t.Fatal(err)
		}
	}

	dump := filepath.Join(t.TempDir(), "steps.jsonl")
	out := runPython(t, py, pyScript(t, "transitions.py"), "--brokers", strings.Join(c.Seeds, ","), "--topic", topic, "--batch-size", "4", "--dump", dump)
	t.Logf("transitions.py:\n%s", out)
	if !strings.Contains(out, fmt.Sprintf("read %d transitions (1 undecodable records skipped)", len(wants))) {
		t.Fatalf("want %d transitions read and the junk record skipped:\n%s", len(wants), out)
	}

	f, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type step struct {
		Batch         int      `json:"batch"`
		EpisodeID     string   `json:"episode_id"`
		Step          int      `json:"step"`
		FrameShape    []int    `json:"frame_shape"`
		FrameB64      string   `json:"frame_b64"`
		Elements      []string `json:"elements"`
		ActionType    string   `json:"action_type"`
		ActionRaw     string   `json:"action_raw"`
		Reward        float64  `json:"reward"`
		LogProb       float64  `json:"log_prob"`
		PolicyVersion uint64   `json:"policy_version"`
		Done          bool     `json:"done"`
	}
	seen := map[string]bool{}
	perBatch := map[int]int{}
	var jpegDiff, jpegPixels float64
	var jpegMax int
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var s step
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("%s/%d", s.EpisodeID, s.Step)
		w, ok := wants[key]
		if !ok {
			t.Fatalf("python read %s, which was not committed (aborted, or never produced)", key)
		}
		if seen[key] {
			t.Fatalf("python read %s twice", key)
		}
		seen[key] = true
		perBatch[s.Batch]++
		tr := w.tr
		var bids []string
		for _, el := range tr.Obs.Elements {
			bids = append(bids, el.Bid)
		}
		if fmt.Sprint(s.Elements) != fmt.Sprint(bids) || s.ActionType != tr.Action.Type.String() || s.ActionRaw != tr.Action.Raw ||
			s.Reward != tr.Reward || s.LogProb != tr.LogProbOld || s.PolicyVersion != tr.PolicyVersion || s.Done != tr.Done {
			t.Errorf("%s: python decoded %+v, go produced elements %v action %s %s reward %v log-prob %v version %d done %v",
				key, s, bids, tr.Action.Type, tr.Action.Raw, tr.Reward, tr.LogProbOld, tr.PolicyVersion, tr.Done)
		}
		if fmt.Sprint(s.FrameShape) != fmt.Sprint([]int{int(tr.Obs.Height), int(tr.Obs.Width), 3}) {
			t.Fatalf("%s: frame shape %v, want [%d %d 3]", key, s.FrameShape, tr.Obs.Height, tr.Obs.Width)
		}
		pix, err := base64.StdEncoding.DecodeString(s.FrameB64)
		if err != nil || len(pix) != len(w.rgb) {
			t.Fatalf("%s: frame of %d bytes (%v), want %d", key, len(pix), err, len(w.rgb))
		}
		if w.format == "png" {
			if !bytes.Equal(pix, w.rgb) {
				t.Errorf("%s: the PNG frame's pixels differ from Go's decoding", key)
			}
			continue
		}
		// JPEG decoders round differently: close, not equal (pageFrame).
		for i := range pix {
			d := int(pix[i]) - int(w.rgb[i])
			jpegDiff += math.Abs(float64(d))
			jpegMax = max(jpegMax, d, -d)
		}
		jpegPixels += float64(len(pix))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(wants) {
		t.Fatalf("python dumped %d steps, want %d", len(seen), len(wants))
	}
	for b, n := range perBatch {
		if n > 4 {
			t.Errorf("batch %d holds %d steps, more than --batch-size 4", b, n)
		}
	}
	if len(perBatch) != (len(wants)+3)/4 {
		t.Errorf("%d batches, want %d", len(perBatch), (len(wants)+3)/4)
	}
	mean := jpegDiff / jpegPixels
	t.Logf("JPEG frames: mean |python - go| %.3f per channel, max %d", mean, jpegMax)
	// Measured: mean 1.3, max 6. Swapped channels would be off by tens.
	if jpegPixels == 0 || mean > 2 || jpegMax > 12 {
		t.Errorf("JPEG frames decode differently in Python: mean |diff| %.3f (want <= 2), max %d (want <= 12)", mean, jpegMax)
	}
}

// publishWeights publishes a version of policy name on the weights topic
// as the learner does (key = policy name, sha256 of the model).
func publishWeights(t *testing.T, c *kafkatest.Cluster, name string, version uint64, onnx []byte, arch policy.Architecture) {
	t.Helper()
	sum := sha256.Sum256(onnx)
	archJSON, err := arch.JSON()
	if err != nil {
		t.Fatal(err)
	}
	b, err := eventspb.Marshal(&eventspb.Weights{Envelope: eventspb.NewEnvelope("pytest"), PolicyName: name, Version: version,
		Onnx: onnx, Format: "onnx", OnnxSha256: hex.EncodeToString(sum[:]), Architecture: archJSON})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Admin.ProduceSync(ctx, &kgo.Record{Topic: c.Catalog.Name(topics.Weights), Key: []byte(name), Value: b}).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestIntegrationPythonPolicy publishes two versions of a policy (and
// another policy's newer one) and recorded observations, exports their
// features with `asyncwebrl policy features`, runs
// analytics/python/policy_check.py (the newest version from the weights
// topic in Python's onnxruntime) on them, and compares its outputs with the
// Go actors' batching server on the same observations: max abs diff < 1e-4.
func TestIntegrationPythonPolicy(t *testing.T) {
	py := testenv.Python(t)
	c := kafkatest.Real(t, "pypol")
	arch := policy.DefaultArchitecture()
	models := map[uint64][]byte{}
	for _, v := range []uint64{1, 2} {
		onnx, err := policy.WriteONNX(arch, arch.NewParams(100+v))
		if err != nil {
			t.Fatal(err)
		}
		models[v] = onnx
		publishWeights(t, c, "default", v, onnx, arch)
	}
	other, err := policy.WriteONNX(arch, arch.NewParams(999))
	if err != nil {
		t.Fatal(err)
	}
	publishWeights(t, c, "other", 7, other, arch)

	ep := eventspb.NewEventID()
	var obs []*eventspb.Observation
	var recs []*kgo.Record
	for s := range 3 {
		o := testObservation(t, ep, s, 40+s, "jpeg")
		b, err := eventspb.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		obs = append(obs, o)
		recs = append(recs, &kgo.Record{Topic: c.Catalog.Name(topics.Obs), Key: []byte(ep), Value: b})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Admin.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	npz := filepath.Join(dir, "features.npz")
	var stdout, stderr bytes.Buffer
	code := Main(ctx, []string{"policy", "features", "--out", npz, "--episode", ep, "--count", "3", "--outputs",
		"-brokers=" + strings.Join(c.Seeds, ","), "-topic-prefix=" + c.Catalog.Prefix}, &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), `wrote 3 observations featurized for policy "default" version 2`) {
		t.Fatalf("policy features: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	outJSON := filepath.Join(dir, "python.json")
	out := runPython(t, py, pyScript(t, "policy_check.py"), "--brokers", strings.Join(c.Seeds, ","),
		"--topic", c.Catalog.Name(topics.Weights), "--features", npz, "--out", outJSON)
	t.Logf("policy_check.py:\n%s", out)
	raw, err := os.ReadFile(outJSON)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		PolicyVersion uint64 `json:"policy_version"`
		Outputs       map[string]struct {
			Shape []int     `json:"shape"`
			Data  []float64 `json:"data"`
		} `json:"outputs"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.PolicyVersion != 2 {
		t.Fatalf("python ran version %d, want the newest of policy default, 2", got.PolicyVersion)
	}

	// The Go actors' path: the batching server on each observation's
	// features, with the newest version; and version 1 for contrast.
	goOutputs := func(onnx []byte, version uint64) [][]float32 {
		srv, err := policy.NewServer(onnx, version, policy.WithIntraOpThreads(1))
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close(context.Background())
		a := srv.Arch()
		res := make([][]float32, 6) // type, elem, cand, value, point, offsets: batch-major
		for _, o := range obs {
			f, err := a.Featurize(o)
			if err != nil {
				t.Fatal(err)
			}
			r, err := srv.Submit(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			res[0] = append(res[0], r.TypeLogits...)
			res[1] = append(res[1], r.ElemLogits...)
			res[2] = append(res[2], r.CandLogits...)
			res[3] = append(res[3], r.Value)
			res[4] = append(res[4], r.PointLogits...)
			res[5] = append(res[5], r.PointOffsets...)
		}
		return res
	}
	maxDiff := func(a []float32, b []float64) float64 {
		if len(a) != len(b) {
			t.Fatalf("%d values, want %d", len(b), len(a))
		}
		d := 0.0
		for i := range a {
			d = math.Max(d, math.Abs(float64(a[i])-b[i]))
		}
		return d
	}
	newest, older := goOutputs(models[2], 2), goOutputs(models[1], 1)
	worst, toOlder := 0.0, 0.0
	for i, name := range []string{policy.OutTypeLogits, policy.OutElemLogits, policy.OutCandLogits, policy.OutValue, policy.OutPointLogits, policy.OutPointOffsets} {
		o, ok := got.Outputs[name]
		if !ok || o.Shape[0] != len(obs) {
			t.Fatalf("python output %s: %+v, want a batch of %d", name, o.Shape, len(obs))
		}
		d := maxDiff(newest[i], o.Data)
		t.Logf("%s: max |python - go| = %.3g", name, d)
		worst = math.Max(worst, d)
		toOlder = math.Max(toOlder, maxDiff(older[i], o.Data))
	}
	if worst >= 1e-4 {
		t.Errorf("python's onnxruntime differs from the Go actors' by %.3g, want < 1e-4", worst)
	}
	// The comparison can tell versions apart: had python run version 1, it
	// would have failed.
	if toOlder < 1e-2 {
		t.Errorf("version 1's outputs are within %.3g of python's: the check cannot tell versions apart", toOlder)
	}
}
