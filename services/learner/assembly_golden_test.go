package learner

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// TestAssemblyGolden is the learner's return assembly as a specification
// (testdata/assembly): transitions in, the samples released for training
// with their returns (and GRPO's group advantages) out. PPO and REINFORCE
// share the assembly (returns-to-go; their advantage comes from the value
// head at training time), GRPO waits for whole groups. The assembly is pure
// Go; the package's test binary links libtorch only because the package does.
// Rewrite with `go test ./services/learner -run AssemblyGolden -rewrite`.
//
//	init algo=ppo|reinforce|grpo [gamma=G] [group-size=N] [ttl=D] [success-only]
//	add ep=E t=T [r=R] [group=G] [done] [success] [at=D]
//	expire at=D
//	pending
//
// Times (at) are offsets from a fixed start; a sample is named "E/T".
func TestAssemblyGolden(t *testing.T) {
	datadriven.Walk(t, "testdata/assembly", func(t *testing.T, path string) {
		var (
			a     *assembler
			grpo  bool
			names map[*sample]string
		)
		start := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
		at := func(d *datadriven.TestData) time.Time {
			if !d.HasArg("at") {
				return start
			}
			var s string
			d.ScanArgs(t, "at", &s)
			dur, err := time.ParseDuration(s)
			if err != nil {
				d.Fatalf(t, "at=%s: %v", s, err)
			}
			return start.Add(dur)
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd != "init" && a == nil {
				d.Fatalf(t, "%s before init", d.Cmd)
			}
			switch d.Cmd {
			case "init":
				var algoName string
				d.ScanArgs(t, "algo", &algoName)
				algo, err := ParseAlgo(algoName)
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				gamma, groupSize, ttl := 0.99, 0, 2*time.Minute
				if d.HasArg("gamma") {
					var g string
					d.ScanArgs(t, "gamma", &g)
					gamma, _ = strconv.ParseFloat(g, 64)
				}
				if d.HasArg("group-size") {
					d.ScanArgs(t, "group-size", &groupSize)
				}
				if d.HasArg("ttl") {
					var s string
					d.ScanArgs(t, "ttl", &s)
					ttl, _ = time.ParseDuration(s)
				}
				// As the learner builds it (service.go, offline.go).
				grpo = algo == GRPO
				a = newAssembler(gamma, grpo, groupSize, ttl)
				if d.HasArg("success-only") {
					a.keep = func(ret float64, success bool) bool { return success }
				}
				names = map[*sample]string{}
				return ""
			case "add":
				var ep string
				var step int
				d.ScanArgs(t, "ep", &ep)
				d.ScanArgs(t, "t", &step)
				var r float64
				if d.HasArg("r") {
					var s string
					d.ScanArgs(t, "r", &s)
					r, _ = strconv.ParseFloat(s, 64)
				}
				var group string
				if d.HasArg("group") {
					d.ScanArgs(t, "group", &group)
				}
				s := &sample{}
				names[s] = fmt.Sprintf("%s/%d", ep, step)
				out := a.add(ep, group, uint32(step), s, r, d.HasArg("done"), d.HasArg("success"), at(d))
				return released(out, names, grpo)
			case "expire":
				out, dropped := a.expire(at(d))
				return fmt.Sprintf("given up: %d episode(s)\n", dropped) + released(out, names, grpo)
			case "pending":
				return fmt.Sprintf("pending: %d transition(s)\n", a.pending())
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}

// released lists the samples ready for training in the order given
// (episodes in step order; a GRPO group's episodes in the order they ended).
func released(out []*sample, names map[*sample]string, grpo bool) string {
	if len(out) == 0 {
		return "held\n"
	}
	var b strings.Builder
	for _, s := range out {
		fmt.Fprintf(&b, "train %s ret=%s", names[s], strconv.FormatFloat(s.ret, 'g', 6, 64))
		if grpo {
			fmt.Fprintf(&b, " adv=%s", strconv.FormatFloat(s.adv, 'g', 6, 64))
		}
		b.WriteString("\n")
	}
	return b.String()
}
