package drill

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
)

func TestParseDrillFlags(t *testing.T) {
	d, rest, err := parseDrillFlags([]string{"--schedule", "recorder@1m,broker@5s", "--down=3s", "-topic-partitions=4"})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.schedule) != 2 || d.schedule[0] != (scheduled{"broker", 5 * time.Second}) || d.schedule[1] != (scheduled{"recorder", time.Minute}) {
		t.Errorf("schedule %+v, want broker@5s then recorder@1m", d.schedule)
	}
	if d.down != 3*time.Second || d.tail != 15*time.Second || d.members != 2 || d.nodes != 3 {
		t.Errorf("flags %+v", d)
	}
	if len(rest) != 1 || rest[0] != "-topic-partitions=4" {
		t.Errorf("rest %v, want the binary's flag", rest)
	}
	for _, bad := range [][]string{
		{"--schedule", "actor@5s"}, // real actors are not drilled yet
		{"--schedule", "broker"},
		{"--schedule", "clickhouse@5s"}, // the shared server is never stopped
		{"--synthetic=maybe"},
		{"--executors", "0"},
		{"--down", "-1s"},
		{"--nodes", "10"},
		{"--schedule", "actor-partition@5s"}, // an actor to cut needs real actors
		{"--loss", "1"},
		{"--latency", "0s"},
	} {
		if _, _, err := parseDrillFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if _, _, err := parseDrillFlags([]string{"--schedule", "clickhouse@5s", "--private-clickhouse"}); err != nil {
		t.Errorf("clickhouse fault on a private server: %v", err)
	}
	// The network faults' defaults: a minute, 200 ms, 5%.
	d, _, err = parseDrillFlags([]string{"--schedule", "joiner-latency@5s,broker-partition@1s"})
	if err != nil {
		t.Fatal(err)
	}
	if d.netDown != time.Minute || d.latency != 200*time.Millisecond || d.loss != 0.05 || d.schedule[0].name != "broker-partition" {
		t.Errorf("network flags %+v", d)
	}
	var said []string
	say := func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }
	kept := dropLabFaults(d.schedule, errors.New("no netns"), say)
	if len(kept) != 0 || len(said) != 1 || !strings.Contains(said[0], "skipping the faults broker-partition, joiner-latency") {
		t.Errorf("dropLabFaults: kept %v, said %q", kept, said)
	}
	said = nil
	if kept := dropLabFaults([]scheduled{{"clickhouse-latency", 0}, {"joiner", 0}}, errors.New("no netns"), say); len(kept) != 2 || said != nil {
		t.Errorf("dropLabFaults dropped a fault that needs no namespace: kept %v, said %q", kept, said)
	}
	// Real actors: their own default schedule, with the actor's faults.
	d, _, err = parseDrillFlags([]string{"--synthetic=false", "--executors=2"})
	if err != nil {
		t.Fatal(err)
	}
	if !d.real || d.executors != 2 || len(d.schedule) != 5 || d.schedule[3].name != "actor" || d.schedule[4].name != "chromium" {
		t.Errorf("real-actor flags %+v", d)
	}
}

// Every schedule of the drill matrix parses as a drill's flags; the
// matrix refuses what it sets per run, and unknown schedules.
func TestDrillMatrixRuns(t *testing.T) {
	for _, r := range drillMatrix {
		d, rest, err := parseDrillFlags(r.args)
		if err != nil {
			t.Errorf("%s: %v", r.name, err)
			continue
		}
		if len(rest) != 0 || len(d.schedule) == 0 {
			t.Errorf("%s: schedule %+v, rest %v", r.name, d.schedule, rest)
		}
	}
	for _, bad := range [][]string{{"--runs", "nosuch"}, {"--repeat", "0"}, {"--schedule", "broker@1s"}, {"--keep"}} {
		err := runMatrix(t.Context(), bad, io.Discard, io.Discard)
		var ue cmdkit.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", bad, err)
		}
	}
}

// A matrix line says PASS only for a passing drill, and names a learner
// that exited on its own and the cut tails.
func TestDrillMatrixLine(t *testing.T) {
	res := &drillResult{
		inputs:  []loadtest.Verdict{{Name: "obs", Expected: 10, Found: 10, Cut: 2}},
		traffic: &loadtest.Traffic{CutEpisodes: 1},
		faults:  []faultResult{{name: "actor", recoveries: []loadtest.Recovery{{Resumed: time.Second, Recovered: time.Second}}}},
	}
	line := matrixLine(res, nil, time.Minute)
	if !strings.HasPrefix(line, "PASS") || !strings.Contains(line, "cut 2 (of 1 episodes; 0 terminal)") || !strings.Contains(line, "faults 1/1") {
		t.Errorf("passing run: %s", line)
	}
	res.selfExits = []string{"learner-1 exited on its own"}
	if line := matrixLine(res, errDrillFailed, time.Minute); !strings.HasPrefix(line, "FAIL") || !strings.Contains(line, "learner self-exits 1") {
		t.Errorf("a learner's own exit: %s", line)
	}
}
