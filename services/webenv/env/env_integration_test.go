package env

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// harness is one webenv server (every split, the sample third-party page) and
// one Chromium for the env's integration tests.
type harness struct {
	srv *webenv.Server
	b   *Browser
}

func newHarness(t testing.TB, opts ...webenv.Option) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := webenv.New(append([]webenv.Option{webenv.WithSplit(catalog.SplitAll), webenv.WithLogger(quiet),
		webenv.WithThirdPartyDir("../testdata/thirdparty")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	b, err := LaunchBrowser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return &harness{srv: srv, b: b}
}

func (h *harness) env(t testing.TB, opts ...Option) *Env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := New(ctx, h.b, h.srv.URL(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

func find(t *testing.T, obs *Observation, role, text string) Element {
	t.Helper()
	for _, el := range obs.Elements {
		if (role == "" || el.Role == role) && (text == "" || el.Text == text) {
			return el
		}
	}
	t.Fatalf("no %s element %q in %+v", role, text, obs.Elements)
	return Element{}
}

func step(t *testing.T, e *Env, a string) *StepResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := e.StepString(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	return r
}

func reset(t testing.TB, e *Env, task TaskRef) *Observation {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obs, err := e.Reset(ctx, task)
	if err != nil {
		t.Fatalf("reset %+v: %v", task, err)
	}
	return obs
}

func TestIntegrationEnv(t *testing.T) {
	h := newHarness(t)
	e := h.env(t)
	ctx := context.Background()

	t.Run("reset rejects unknown tasks", func(t *testing.T) {
		for _, c := range []struct {
			task TaskRef
			want string
		}{
			{TaskRef{Family: "no-such", Site: "aurora", Seed: 1}, "unknown task family"},
			{TaskRef{Family: "click-button", Site: "mars", Seed: 1}, "unknown site"},
			{TaskRef{Family: "click-button", Site: "aurora", Seed: -1}, "unknown seed"},
			{TaskRef{Family: "thirdparty/missing"}, "no third-party page"},
		} {
			if _, err := e.Reset(ctx, c.task); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%+v: %v, want an error mentioning %q", c.task, err, c.want)
			}
		}
		if _, err := e.Step(ctx, Action{Type: Noop}); err == nil {
			t.Error("Step without an episode did not fail")
		}
	})

	t.Run("observation", func(t *testing.T) {
		obs := reset(t, e, TaskRef{Family: "type-text", Site: "cedar", Seed: 3})
		p, _ := webenv.Generate("type-text", "cedar", 3)
		if obs.Instruction != p.Instruction || !strings.HasSuffix(obs.URL, "/t/type-text/cedar/") {
			t.Errorf("instruction %q url %q", obs.Instruction, obs.URL)
		}
		if obs.Viewport != (catalog.Size{W: 160, H: 210}) || len(obs.Screenshot) < 100 || string(obs.Screenshot[1:4]) != "PNG" {
			t.Errorf("viewport %v screenshot %d bytes", obs.Viewport, len(obs.Screenshot))
		}
		box := find(t, obs, "textbox", "")
		if box.BID == "" || box.Box.W == 0 || !box.InViewport {
			t.Errorf("textbox %+v", box)
		}
		// The page's text: copy-text's code is in a <b>, in no element.
		code := reset(t, e, TaskRef{Family: "copy-text", Site: "cedar", Seed: 3})
		cp, _ := webenv.Generate("copy-text", "cedar", 3)
		if want := "Code: " + cp.Plan[0].Text; !slices.Contains(code.Text, want) {
			t.Errorf("copy-text's page text %q lacks %q", code.Text, want)
		}
		// Same seed, same problem; another seed, another.
		again := reset(t, e, TaskRef{Family: "type-text", Site: "cedar", Seed: 3})
		other := reset(t, e, TaskRef{Family: "type-text", Site: "cedar", Seed: 4})
		if again.Instruction != obs.Instruction || other.Instruction == obs.Instruction {
			t.Errorf("seeding: %q %q %q", obs.Instruction, again.Instruction, other.Instruction)
		}
	})

	t.Run("malformed actions leave the episode going", func(t *testing.T) {
		obs := reset(t, e, TaskRef{Family: "type-text", Site: "aurora", Seed: 8})
		p, _ := webenv.Generate("type-text", "aurora", 8)
		box := find(t, obs, "textbox", "")
		btn := find(t, obs, "button", "")
		for a, want := range map[string]string{
			`fill("` + box.BID:                      "unable to parse",
			`jump("1")`:                             "unknown action",
			`click("999999")`:                       "no element with bid",
			`fill("` + btn.BID + `", "x")`:          "not a text field",
			`select_option("` + box.BID + `", "x")`: "not a select",
			`go_back()`:                             "no previous page",
			`goto("ftp://example/")`:                "bad url",
		} {
			r := step(t, e, a)
			if r.Done || !strings.Contains(r.Info.Error, want) || r.Reward != 0 {
				t.Errorf("%s: done %v error %q reward %v, want an error mentioning %q", a, r.Done, r.Info.Error, r.Reward, want)
			}
		}
		r := step(t, e, `fill("`+box.BID+`", "`+p.Plan[0].Text+`")`)
		if r.Done || r.Info.Error != "" || r.Info.Partial != 0.5 {
			t.Fatalf("fill: %+v", r.Info)
		}
		r = step(t, e, `click("`+btn.BID+`")`)
		if !r.Done || !r.Info.Success || r.Reward != 1 || r.Info.Raw != 1 || r.Info.Partial != 1 {
			t.Fatalf("submit: reward %v %+v", r.Reward, r.Info)
		}
		r = step(t, e, `noop(0)`)
		if !r.Done || !strings.Contains(r.Info.Error, "episode is done") {
			t.Errorf("after done: %+v", r.Info)
		}
	})

	t.Run("press sends real keys", func(t *testing.T) {
		obs := reset(t, e, TaskRef{Family: "type-text", Site: "basalt", Seed: 1})
		box := find(t, obs, "textbox", "")
		step(t, e, `click("`+box.BID+`")`)
		for _, k := range []string{"x", "Y", "z", "Backspace"} {
			step(t, e, `press("`+k+`")`)
		}
		r := step(t, e, `press("`+box.BID+`", "Shift+Home")`)
		if got := find(t, r.Obs, "textbox", "").Value; got != "xY" {
			t.Errorf("typed %q, want xY", got)
		}
	})

	t.Run("select options give dense partial credit", func(t *testing.T) {
		obs := reset(t, e, TaskRef{Family: "dropdowns", Site: "dune", Seed: 2})
		p, _ := webenv.Generate("dropdowns", "dune", 2)
		prev := 0.0
		for _, st := range p.Plan[:3] {
			var bid string
			for _, el := range obs.Elements {
				for _, o := range el.Options {
					if o == st.Text && bid == "" && el.Value == "" {
						bid = el.BID
					}
				}
			}
			r := step(t, e, Action{Type: SelectOption, BID: bid, Options: []string{st.Text}}.String())
			if r.Info.Error != "" || r.Info.Partial <= prev {
				t.Fatalf("select %s: partial %v after %v, error %q", st.Text, r.Info.Partial, prev, r.Info.Error)
			}
			prev, obs = r.Info.Partial, r.Obs
		}
	})

	t.Run("scroll", func(t *testing.T) {
		obs := reset(t, e, TaskRef{Family: "click-in-list", Site: "aurora", Seed: 5})
		first := obs.Elements[len(obs.Elements)-1]
		r := step(t, e, `scroll(0, 120)`)
		var moved Element
		for _, el := range r.Obs.Elements {
			if el.BID == first.BID {
				moved = el
			}
		}
		if r.Info.Error != "" || moved.Box.Y >= first.Box.Y {
			t.Errorf("scroll: error %q, element y %d -> %d", r.Info.Error, first.Box.Y, moved.Box.Y)
		}
	})

	t.Run("goto and go_back on a multi-page site", func(t *testing.T) {
		obs := reset(t, e, TaskRef{Family: "navigate-pages", Site: "basalt", Seed: 4})
		home := obs.URL
		if !strings.Contains(home, "/e/") {
			t.Fatalf("the start page of a multi-page site has url %s", home)
		}
		link := obs.Elements[0]
		r := step(t, e, `click("`+link.BID+`")`)
		if r.Obs.URL == home {
			t.Fatalf("click on %q stayed on %s", link.Text, r.Obs.URL)
		}
		r = step(t, e, `goto("/no/such/page")`)
		if r.Info.Error != "" || r.Done || !strings.HasSuffix(r.Obs.URL, "/no/such/page") || r.Info.Episode == "" {
			t.Fatalf("goto: %+v url %s", r.Info, r.Obs.URL)
		}
		r = step(t, e, `go_back()`)
		if r.Info.Error != "" || r.Obs.URL == "" || strings.HasSuffix(r.Obs.URL, "/no/such/page") {
			t.Fatalf("go_back: %q url %s", r.Info.Error, r.Obs.URL)
		}
		r = step(t, e, `go_back()`)
		if r.Obs.URL != home || r.Obs.Instruction != obs.Instruction || r.Done {
			t.Fatalf("go_back to the first page: url %s (want %s), instruction %q", r.Obs.URL, home, r.Obs.Instruction)
		}
	})

	t.Run("send_msg_to_user reports an answer", func(t *testing.T) {
		task := TaskRef{Family: "find-and-report", Site: "cedar", Seed: 6}
		reset(t, e, task)
		p, _ := webenv.Generate("find-and-report", "cedar", 6)
		var vals []string
		for _, st := range p.Plan {
			if st.Op == "fill" {
				vals = append(vals, st.Text)
			}
		}
		for _, st := range p.Plan[:3] { // department, person, manager
			c, cancel := context.WithTimeout(ctx, 30*time.Second)
			bid, err := e.QueryBID(c, st.Sel, 10*time.Second)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			step(t, e, `click("`+bid+`")`)
		}
		r := step(t, e, Action{Type: SendMsg, Text: "The manager: " + strings.Join(vals, ", ")}.String())
		if !r.Done || !r.Info.Success || r.Reward != 1 || len(r.Info.Messages) != 1 {
			t.Fatalf("message: reward %v %+v", r.Reward, r.Info)
		}
	})

	t.Run("third-party page and dialogs", func(t *testing.T) {
		task := TaskRef{Family: "thirdparty/sample-click", Seed: 7}
		obs := reset(t, e, task)
		target := strings.TrimSuffix(strings.TrimPrefix(obs.Instruction, "Press the button labelled "), ".")
		again := reset(t, e, task)
		if again.Instruction != obs.Instruction {
			t.Errorf("seeded third-party page changed: %q vs %q", obs.Instruction, again.Instruction)
		}
		r := step(t, e, `click("`+find(t, again, "button", target).BID+`")`)
		if !r.Done || !r.Info.Success || r.Reward != 1 || r.Info.Raw != 1 {
			t.Fatalf("right button: reward %v %+v", r.Reward, r.Info)
		}
		// A wrong button raises alert(): the env dismisses it, the page ends
		// the episode with -1.
		obs = reset(t, e, task)
		var wrong Element
		for _, el := range obs.Elements {
			if el.Role == "button" && el.Text != target {
				wrong = el
			}
		}
		r = step(t, e, `click("`+wrong.BID+`")`)
		if !r.Done || r.Info.Success || r.Reward != 0 || r.Info.Raw != -1 || r.Info.Reason != "wrong button" {
			t.Fatalf("wrong button: reward %v %+v", r.Reward, r.Info)
		}
	})

	t.Run("shaping terms", func(t *testing.T) {
		es := h.env(t, WithShaping(webenv.DefaultShaping))
		obs := reset(t, es, TaskRef{Family: "choose-radio", Site: "aurora", Seed: 2})
		p, _ := webenv.Generate("choose-radio", "aurora", 2)
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		bid, err := es.QueryBID(c, p.Plan[0].Sel, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = obs
		r, err := es.Step(c, Action{Type: Click, BID: bid})
		if err != nil {
			t.Fatal(err)
		}
		if r.Info.Shaping.Progress <= 0 || r.Info.Shaping.SubGoal <= 0 || r.Info.Shaping.NoOpClick != 0 || r.Reward <= 0 {
			t.Errorf("first click: reward %v terms %+v", r.Reward, r.Info.Shaping)
		}
		// The same radio again: nothing changes, and it repeats.
		r, err = es.Step(c, Action{Type: Click, BID: bid})
		if err != nil {
			t.Fatal(err)
		}
		if r.Info.Shaping.NoOpClick >= 0 || r.Info.Shaping.Repeat >= 0 || r.Reward >= 0 {
			t.Errorf("repeated no-op click: reward %v terms %+v", r.Reward, r.Info.Shaping)
		}
	})
}
