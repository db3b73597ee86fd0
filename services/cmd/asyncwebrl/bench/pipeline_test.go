package bench

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/actor"
)

// The components' table: largest first, shares of the machine's busy time,
// and the rest of the machine as what the components did not use.
func TestPipelineShareRows(t *testing.T) {
	ps := &pipelineShare{window: time.Minute, executors: 12, cores: 2, machineBusy: 110 * time.Second,
		cpu:      map[string]time.Duration{"learner": 30 * time.Second, "actor": time.Minute, "broker": 10 * time.Second},
		episodes: 240, steps: 1200, episodesPerSecond: 4, stepsPerSecond: 20}
	var got []string
	for _, r := range ps.rows() {
		got = append(got, fmt.Sprintf("%s %.2f %s", r.name, r.cores, r.share))
	}
	want := []string{"actor 1.00 55%", "learner 0.50 27%", "broker 0.17 9%", "the rest of the machine 0.17 9%"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("rows %q, want %q", got, want)
	}
	// Unmeasured machine: no share, no rest.
	ps.machineBusy = 0
	if rows := ps.rows(); len(rows) != 3 || rows[0].share != "-" {
		t.Errorf("rows without the machine: %+v", rows)
	}
	var b bytes.Buffer
	printPipelineShare(&b, ps)
	if !strings.Contains(b.String(), "4.00 episodes/s, 20.0 steps/s") {
		t.Errorf("output misses the throughput:\n%s", b.String())
	}
	var doc strings.Builder
	async := func(steps float64) map[actor.Mode][]float64 {
		return map[actor.Mode][]float64{actor.ModeAsync: {steps}}
	}
	pipelineTable(&doc, ps, []rolloutSummary{{executors: 4, steps: async(10), eps: async(2)}, {executors: 16, profile: "none", steps: async(30), eps: async(6)},
		{executors: 12}}) // the run at 12 has no async figure: left out
	if !strings.Contains(doc.String(), "rollout alone (async, 16 executors, profile none) | 6.00 | 30.0 |") {
		t.Errorf("the rollout row is not the nearest count's:\n%s", doc.String())
	}
}
