package env

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkStepParts prices the parts of a pipeline step on one tab of a
// real Chromium, in wall time and in CPU of the whole machine per
// operation (cpu-ms/op: run it on an otherwise idle machine): the raw
// loop's step (a click and a screenshot, bench rollout's floor), and what
// the pipeline adds to it: the observation's DOM read (ObserveJS, which the
// policy's element candidates need), a screenshot alone, and a Reset (a new
// task's page, once per episode). Settling is not priced here: the actor's
// settler (actor.Visual) lives above this package (ARCHITECTURE.md, change
// log):
//
//	go test ./services/webenv/env/ -run '^$' -bench StepParts -benchtime 200x
func BenchmarkStepParts(b *testing.B) {
	h := newHarness(b)
	e := h.env(b)
	task := TaskRef{Family: "click-button", Site: "aurora", Seed: 1}
	ctx := context.Background()
	part := func(name string, op func() error) {
		b.Run(name, func(b *testing.B) {
			reset(b, e, task)
			c0 := busyJiffies(b)
			b.ResetTimer()
			for range b.N {
				if err := op(); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(busyJiffies(b)-c0)*10/float64(b.N), "cpu-ms/op")
		})
	}
	part("raw-step", func() error { return e.RawStep(ctx) })
	part("observe-js", func() error {
		c, cancel := e.bind(ctx)
		defer cancel()
		var o observed
		return e.eval(c, ObserveJS, &o)
	})
	part("screenshot", func() error {
		c, cancel := e.bind(ctx)
		defer cancel()
		_, err := e.screenshot(c)
		return err
	})
	part("reset", func() error {
		task.Seed++
		_, err := e.Reset(ctx, task)
		return err
	})
}

// busyJiffies is the machine's non-idle CPU time so far, in jiffies
// (10 ms at USER_HZ 100).
func busyJiffies(b *testing.B) int64 {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		b.Skipf("no /proc/stat: %v", err)
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	f := strings.Fields(line)[1:]
	var busy int64
	for i, s := range f {
		n, _ := strconv.ParseInt(s, 10, 64)
		if i != 3 && i != 4 && i < 8 { // idle, iowait; guest time is in user already
			busy += n
		}
	}
	return busy
}
