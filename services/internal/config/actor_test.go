package config

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestActorFlags(t *testing.T) {
	getenv := func(k string) string {
		return map[string]string{"ASYNCWEBRL_EXECUTORS": "6", "ASYNCWEBRL_LATENCY_PROFILE": "web"}[k]
	}
	c, err := Parse([]string{"-actor-mode=sync", "-browsers", "2", "-allowed-origins", "http://a:1, http://b:2", "-frame-store"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a := c.Actor
	if a.Executors != 6 || a.Browsers != 2 || a.Mode != "sync" || !a.FrameStore || a.PolicyName != "default" ||
		strings.Join(a.AllowedOrigins, " ") != "http://a:1 http://b:2" || c.Webenv.LatencyProfile != "web" {
		t.Fatalf("actor config %+v, webenv %+v", a, c.Webenv)
	}
	d, err := Parse(nil, func(string) string { return "" }, io.Discard)
	if err != nil || d.Actor.Executors != 4 || d.Actor.Mode != "async" || d.Actor.AllowedOrigins != nil || d.Webenv.LatencyProfile != "none" {
		t.Fatalf("defaults %+v %+v, %v", d.Actor, d.Webenv, err)
	}
	for _, args := range [][]string{{"-executors=300"}, {"-executors=-1"}, {"-executors=4", "-browsers=5"}, {"-actor-mode=fast"}, {"-actor-mode=raw"}, {"-browser-nice=20"}} {
		if _, err := Parse(args, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestParseMiniWoBTimeLimit(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 0, "page": 0, "off": noMiniWoBTimeLimit, "OFF": noMiniWoBTimeLimit, "1m0s": time.Minute} {
		got, err := ParseMiniWoBTimeLimit(in)
		if err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
		if in != "" && in != "OFF" && MiniWoBTimeLimitName(got) != in {
			t.Errorf("%q names itself %q", in, MiniWoBTimeLimitName(got))
		}
	}
	for _, in := range []string{"-1s", "0s", "soon"} {
		if _, err := ParseMiniWoBTimeLimit(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
	c, err := Parse([]string{"-miniwob-time-limit=off"}, func(string) string { return "" }, io.Discard)
	if err != nil || c.Actor.MiniWoBTimeLimit != noMiniWoBTimeLimit {
		t.Errorf("-miniwob-time-limit=off: %v, %v", c.Actor.MiniWoBTimeLimit, err)
	}
}
