package actor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

func TestFrameEncoder(t *testing.T) {
	shot := pngFrame(t, 5) // 40x30
	for _, format := range []string{"jpeg", "png"} {
		fe := frameEncoder{maxSide: 20, format: format, quality: 80}
		f, err := fe.encode(shot, nil, 80, 60) // device scale 0.5: 80x60 CSS px
		if err != nil {
			t.Fatal(err)
		}
		// The settler's decoded screenshot stands in for decoding it.
		pixels, err := decodeScreenshot(shot)
		if err != nil {
			t.Fatal(err)
		}
		if g, err := fe.encode(shot, pixels, 80, 60); err != nil || !bytes.Equal(g.data, f.data) || g.width != f.width || g.height != f.height || g.scaleX != f.scaleX || g.scaleY != f.scaleY {
			t.Fatalf("%s: the wire frame of the decoded screenshot differs (%v)", format, err)
		}
		var img image.Image
		if format == "jpeg" {
			img, err = jpeg.Decode(bytes.NewReader(f.data))
		} else {
			img, err = png.Decode(bytes.NewReader(f.data))
		}
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if b := img.Bounds(); b.Dx() != 20 || b.Dy() != 15 || f.width != 20 || f.height != 15 {
			t.Fatalf("%s: %v, %dx%d; want 20x15", format, b, f.width, f.height)
		}
		if f.scaleX != 0.25 || f.scaleY != 0.25 {
			t.Fatalf("%s: scale %v, %v; want 0.25 frame px per CSS px", format, f.scaleX, f.scaleY)
		}
	}
	if _, err := (frameEncoder{maxSide: 20, format: "png"}).encode([]byte("not a png"), nil, 1, 1); err == nil {
		t.Fatal("garbage screenshot accepted")
	}
}

func TestAllowlistOrigins(t *testing.T) {
	a, err := newAllowlist([]string{"http://127.0.0.1:18080/some/path", "HTTPS://Example.COM:443"})
	if err != nil {
		t.Fatal(err)
	}
	for u, want := range map[string]bool{
		"http://127.0.0.1:18080/t/click-button/aurora/": true,
		"http://127.0.0.1:18080":                        true,
		"http://127.0.0.1:18081/":                       false,
		"https://127.0.0.1:18080/":                      false,
		"http://localhost:18080/":                       false,
		"https://example.com/x":                         true,
		"https://example.com:8443/x":                    false,
		"https://evil.example.com/":                     false,
		"http://example.com/":                           false,
		"ftp://example.com/":                            false,
		"::not a url":                                   false,
	} {
		if got := a.allows(u); got != want {
			t.Errorf("allows(%q) = %v, want %v", u, got, want)
		}
	}
	for _, bad := range [][]string{nil, {"not-a-url"}, {"file:///etc"}} {
		if _, err := newAllowlist(bad); err == nil {
			t.Errorf("newAllowlist(%q) accepted", bad)
		}
	}
}

func TestObservationEvent(t *testing.T) {
	ob := &observer{enc: frameEncoder{maxSide: 20, format: "jpeg", quality: 80}}
	ref := &eventspb.TaskRef{TaskId: "t", Family: "click-button", Site: "aurora"}
	o := &env.Observation{
		Screenshot: pngFrame(t, 1), Viewport: catalog.Size{W: 40, H: 30}, URL: "http://x/", Instruction: "Click OK",
		Elements: []env.Element{{BID: "7", Role: "button", Text: strings.Repeat("é", 300), Box: env.Box{X: 4, Y: 8, W: 10, H: 6}, Checked: true, Value: "v", Focused: true,
			Hint: "span like", Context: "@ann: hi", DOMID: "(2,-1)"}},
		Stable: true, SettleWait: 120 * time.Millisecond, Score: 0.9,
	}
	ev, err := ob.observation("executor-1", "ep", 3, ref, o, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := eventspb.Validate(ev); err != nil {
		t.Fatal(err)
	}
	e := ev.GetElements()[0]
	if b := e.GetBox(); b.GetX() != 2 || b.GetY() != 4 || b.GetW() != 5 || b.GetH() != 3 {
		t.Fatalf("box %v, want CSS px halved into the 20x15 frame", b)
	}
	if len(e.GetText()) > maxText || !strings.HasPrefix(strings.Repeat("é", 300), e.GetText()) || !e.GetChecked() || !e.GetFocused() || e.GetValue() != "v" ||
		e.GetHint() != "span like" || e.GetContext() != "@ann: hi" || e.GetDomId() != "(2,-1)" {
		t.Fatalf("element %v", e)
	}
	env := ev.GetEnvelope()
	if env.GetEpisodeId() != "ep" || env.GetStep() != 3 || env.GetProducer() != "executor-1" || !ev.GetTerminal() || !ev.GetStable() ||
		ev.GetStabilityScore() != 0.9 || ev.GetTimings().GetSettleMs() != 120 || ev.GetWidth() != 20 || ev.GetHeight() != 15 || ev.GetFullFrameHash() != "" {
		t.Fatalf("event %v", ev)
	}
}

func TestEnvAction(t *testing.T) {
	k := uint32(0)
	for _, c := range []struct {
		in   *eventspb.Action
		want string
	}{
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_CLICK, Bid: "3"}, `click("3")`},
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_FILL, Bid: "4", Text: "bob", TextToken: &k}, `fill("4", "bob")`},
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_SELECT_OPTION, Bid: "5", Text: "Red"}, `select_option("5", "Red")`},
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_PRESS, Bid: "6", Key: "Enter"}, `press("6", "Enter")`},
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_SCROLL, DeltaY: 50}, `scroll(0, 100)`}, // 0.5 frame px per CSS px
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_NOOP}, `noop(0)`},
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_GO_BACK}, `go_back()`},
		{&eventspb.Action{Type: eventspb.ActionType_ACTION_TYPE_SEND_MSG_TO_USER, Text: "42"}, `send_msg_to_user("42")`},
	} {
		a, err := envAction(c.in, 0.5, 0)
		if err != nil {
			t.Fatal(err)
		}
		if a.String() != c.want {
			t.Errorf("%s -> %s, want %s", c.in.GetType(), a.String(), c.want)
		}
	}
	if _, err := envAction(&eventspb.Action{}, 1, 0); err == nil {
		t.Fatal("unspecified action type accepted")
	}
}

func TestLocalTasks(t *testing.T) {
	g, err := newLocalTasks("a", nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	n := len(g.pairs)
	seen := map[string]bool{}
	for i := 0; i < 2*n; i++ {
		task := g.next()
		if err := eventspb.Validate(task); err != nil {
			t.Fatal(err)
		}
		if catalog.SiteSplit(task.GetFamily(), task.GetSite()) != catalog.SplitTrain || task.GetSplit() != eventspb.Split_SPLIT_TRAIN {
			t.Fatalf("task on a test site: %v", task)
		}
		if want := int64(5 + i/n); task.GetSeed() != want {
			t.Fatalf("task %d has seed %d, want %d (seeds rise after each round)", i, task.GetSeed(), want)
		}
		if task.GetTier() == eventspb.Tier_TIER_UNSPECIFIED {
			t.Fatalf("task without tier: %v", task)
		}
		seen[task.GetFamily()+"/"+task.GetSite()] = true
	}
	if len(seen) != n || n < len(catalog.Families()) {
		t.Fatalf("%d distinct pairs over two rounds of %d", len(seen), n)
	}
	f, err := newLocalTasks("a", []string{"click-button"}, 0)
	if err != nil || len(f.pairs) != len(catalog.Sites)-1 {
		t.Fatalf("click-button only: %d pairs, %v", len(f.pairs), err)
	}
	if _, err := newLocalTasks("a", []string{"no-such-family"}, 0); err == nil {
		t.Fatal("unknown family accepted")
	}
}

func TestTaskRefFillsTierAndSplit(t *testing.T) {
	test := catalog.TestSite("click-button")
	ref := taskRef(&eventspb.Task{TaskId: "x", Family: "click-button", Site: test, GroupId: "g"})
	if ref.GetTier() != eventspb.Tier_TIER_EASY || ref.GetSplit() != eventspb.Split_SPLIT_TEST || ref.GetGroupId() != "g" {
		t.Fatalf("ref %v", ref)
	}
}

func TestTaskSourceFallsBackToLocal(t *testing.T) {
	g, err := newLocalTasks("a", []string{"click-button"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := newTaskSource(nil, g, time.Hour, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
	task, err := s.next(context.Background())
	if err != nil || task.GetFamily() != "click-button" {
		t.Fatalf("next without a tasks client: %v, %v", task, err)
	}
}

// Before any assignment the local generator takes over after the grace;
// once a scheduler was heard from, only after the (longer) pause, so a
// scheduler holding tasks back is not undone by local ones.
func TestTaskSourceWaitsLongerOnceHeard(t *testing.T) {
	s := newTaskSource(nil, nil, 3*time.Second, 30*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t0 := s.last
	if got := s.fallbackIn(t0.Add(time.Second)); got != 2*time.Second {
		t.Fatalf("before any assignment: fallback in %s, want 2s", got)
	}
	s.heard = true
	if got := s.fallbackIn(t0.Add(time.Second)); got != 29*time.Second {
		t.Fatalf("after an assignment: fallback in %s, want 29s", got)
	}
	if got := s.fallbackIn(t0.Add(31 * time.Second)); got > 0 {
		t.Fatalf("a scheduler silent past the pause: fallback in %s, want now", got)
	}
	if s := newTaskSource(nil, nil, 5*time.Second, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil))); s.pause != 5*time.Second {
		t.Fatalf("a pause shorter than the grace: %s, want the grace", s.pause)
	}
}

func TestTimeSplitWindows(t *testing.T) {
	ts := newTimeSplit()
	ts.add(phThink, 3*time.Millisecond)
	ts.add(phWait, 5*time.Millisecond)
	ts.add(phIdle, -time.Second) // clock skew is not negative time
	ts.count(2, 1)
	w := ts.window("p", "actor", "actor/executor-0", ModeSync)
	if err := eventspb.Validate(w); err != nil {
		t.Fatal(err)
	}
	if w.GetThinkUs() != 3000 || w.GetWaitUs() != 5000 || w.GetIdleUs() != 0 || w.GetSteps() != 2 || w.GetEpisodes() != 1 || w.GetMode() != "sync" {
		t.Fatalf("window %v", w)
	}
	if w2 := ts.window("p", "actor", "e", ModeSync); w2.GetThinkUs() != 0 || w2.GetSteps() != 0 || w2.GetWindowStartUnixNano() != w.GetWindowEndUnixNano() {
		t.Fatalf("second window %v", w2)
	}
	if tot := ts.totals(); tot.Think != 3*time.Millisecond || tot.Total() != 8*time.Millisecond {
		t.Fatalf("totals %+v", tot)
	}
}

func TestOptionsValidate(t *testing.T) {
	for name, o := range map[string]Option{
		"format": WithFrameFormat("gif"), "side": WithFrameMaxSide(2), "steps": WithMaxSteps(0),
		"quality": WithJPEGQuality(101),
	} {
		opts := defaultOptions()
		o(&opts)
		if opts.browsers == 0 {
			opts.browsers = 1
		}
		if err := opts.validate(); err == nil {
			t.Errorf("%s: invalid option accepted", name)
		}
	}
}

func TestWeightsAccept(t *testing.T) {
	arch := policy.DefaultArchitecture()
	onnx, err := policy.InitialONNX(arch)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(onnx)
	rec := func(key string, version uint64, sha string) *kgo.Record {
		b, err := eventspb.Marshal(&eventspb.Weights{Envelope: eventspb.NewEnvelope("t"), PolicyName: key, Version: version, Onnx: onnx, OnnxSha256: sha})
		if err != nil {
			t.Fatal(err)
		}
		return &kgo.Record{Key: []byte(key), Value: b}
	}
	bad := 0
	w := &weightsWatcher{policy: "default", log: slog.New(slog.NewTextHandler(io.Discard, nil)), onBad: func() { bad++ }}
	good := hex.EncodeToString(sum[:])
	if l, ok := w.accept(rec("default", 3, good), 2, true); !ok || l.version != 3 {
		t.Fatal("a newer version was refused")
	}
	if _, ok := w.accept(rec("default", 0, good), 0, false); !ok {
		t.Fatal("published version 0 refused while serving the initial policy")
	}
	for name, c := range map[string]struct {
		r       *kgo.Record
		have    uint64
		haveAny bool
	}{
		"older":        {rec("default", 2, good), 2, true},
		"other policy": {rec("other", 9, good), 0, false},
		"tombstone":    {&kgo.Record{Key: []byte("default")}, 0, false},
		"bad sha":      {rec("default", 9, strings.Repeat("0", 64)), 0, false},
		"garbage":      {&kgo.Record{Key: []byte("default"), Value: []byte{0xff, 0x01}}, 0, false},
	} {
		if _, ok := w.accept(c.r, c.have, c.haveAny); ok {
			t.Errorf("%s accepted", name)
		}
	}
	if bad != 2 {
		t.Fatalf("%d bad weights counted, want 2 (bad sha, garbage)", bad)
	}
}

func TestProcessesOfFindsHelpersByDirAndGroup(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	waitFound := func(what string, pgid int, dir string, pid int) {
		deadline := time.Now().Add(10 * time.Second)
		for !slices.Contains(processesOf(pgid, dir), pid) {
			if time.Now().After(deadline) {
				t.Fatalf("the helper was not found by its %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// A helper whose arguments arrive space-joined, as Chromium's do after
	// it sets its process title.
	dir := t.TempDir()
	cmd := exec.Command(sleep, "30")
	cmd.Args[0] = "chromium --type=renderer --user-data-dir=" + dir + " --x"
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	waitFound("user-data dir", 0, dir, cmd.Process.Pid)
	// The headless shell's helpers carry no user-data dir: they are found
	// by the browser's process group.
	lead := exec.Command(sleep, "30")
	ownProcessGroup(lead)
	if err := lead.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lead.Process.Kill(); _ = lead.Wait() }()
	helper := exec.Command(sleep, "30")
	helper.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: lead.Process.Pid}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = helper.Process.Kill(); _ = helper.Wait() }()
	waitFound("process group", lead.Process.Pid, "", helper.Process.Pid)
	if pids := processesOf(lead.Process.Pid, dir); len(pids) != 3 {
		t.Fatalf("processesOf found %v, want the leader, its helper and the dir's helper", pids)
	}
	killRest(lead.Process.Pid, dir)
	_, _, _ = cmd.Wait(), lead.Wait(), helper.Wait()
	if pids := processesOf(lead.Process.Pid, dir); len(pids) != 0 {
		t.Fatalf("still running after killRest: %v", pids)
	}
}

// pageState ignores what moves without anything being done (boxes, focus)
// and tells apart what an action changes (a value, a tick).
func TestPageStateForLoopAvoidance(t *testing.T) {
	obs := func(mut func(*eventspb.Element)) *eventspb.Observation {
		el := &eventspb.Element{Bid: "3", Role: "textbox", Text: "Name", Box: &eventspb.Box{X: 1, Y: 2, W: 3, H: 4}}
		if mut != nil {
			mut(el)
		}
		return &eventspb.Observation{Url: "http://x/t/a/", Elements: []*eventspb.Element{el, {Bid: "4", Role: "button", Text: "OK"}}}
	}
	base := pageState(obs(nil))
	if pageState(obs(func(e *eventspb.Element) { e.Focused = true; e.Box.Y = 30 })) != base {
		t.Fatal("focus or a moved box changed the page state")
	}
	for name, mut := range map[string]func(*eventspb.Element){
		"value":   func(e *eventspb.Element) { e.Value = "lego" },
		"checked": func(e *eventspb.Element) { e.Checked = true },
		"text":    func(e *eventspb.Element) { e.Text = "Name2" },
	} {
		if pageState(obs(mut)) == base {
			t.Errorf("a changed %s left the page state equal", name)
		}
	}
}

// TestEpisodeSource: every event of a demonstration says so (Task.demo),
// not its actions only, so the joiner's summary of it does too.
func TestEpisodeSource(t *testing.T) {
	if got := (&episode{}).source(); got != eventspb.Source_SOURCE_POLICY {
		t.Errorf("a policy episode's events carry %v", got)
	}
	if got := (&episode{demo: &demoPlan{}}).source(); got != eventspb.Source_SOURCE_DEMO {
		t.Errorf("a demonstration's events carry %v", got)
	}
}
