package drill

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/asyncwebrl/asyncwebrl/infra/launch"
	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/procstat"
)

// startActors starts the real actors' processes: a webenv serving the
// tasks on a free port and an actor driving --executors executors in two
// Chromium processes against it.
func (d *drillRun) startActors() error {
	addr := "127.0.0.1:" + strconv.Itoa(launch.Port())
	web := &member{name: "webenv-1"}
	web.args = append(d.memberArgs(web, "webenv"), "-webenv-addr="+addr)
	if err := d.startMember(web); err != nil {
		return err
	}
	d.members["webenv"] = []*member{web}
	act := &member{name: "actor-1"}
	act.args = append(d.memberArgs(act, "actor"), "-webenv-url=http://"+addr,
		"-executors="+strconv.Itoa(d.flags.executors), "-browsers=2")
	if err := d.startMember(act); err != nil {
		return err
	}
	d.members["actor"] = []*member{act}
	d.say("started a webenv on %s and an actor (%d executors, 2 Chromium processes)", addr, d.flags.executors)
	return nil
}

// runReal is the drill with real actors: they act until the faults are
// done and --tail more, then stop (SIGTERM), and what the joiner must have
// made of what they wrote is derived from the input topics.
func (d *drillRun) runReal(ctx context.Context, adm *kadm.Client, conn driver.Conn) (*drillResult, error) {
	if err := d.startActors(); err != nil {
		return nil, err
	}
	d.loadStart = time.Now()
	d.say("load: real actors until the last fault recovered and %s more; schedule %s, %s",
		d.flags.tail, scheduleString(d.flags.schedule), d.downs())
	stopProgress := d.progress(ctx, adm)
	res := &drillResult{}
	err := d.faults(ctx, adm, res)
	stopProgress()
	if err != nil {
		return res, err
	}
	res.unclean = append(res.unclean, d.stopMembers("actor")...)
	if n, ok := inputRecords(ctx, adm, d.cat.Inputs()); ok {
		d.say("actors stopped: %d input records in %s", n, time.Since(d.loadStart).Round(time.Second))
	} else {
		d.say("actors stopped after %s (the cluster did not say how many records they wrote)", time.Since(d.loadStart).Round(time.Second))
	}

	settle, cancel := context.WithTimeout(ctx, d.flags.recoveryTimeout+5*time.Minute)
	defer cancel()
	if _, err := kafka.WaitCaughtUp(settle, d.newClient, d.joinerGroup(), d.cat.Inputs()); err != nil {
		return res, err
	}
	d.say("joiner caught up; deriving what it must have made of the actors' events")
	exp, tr, err := loadtest.ExpectTraffic(ctx, d.newClient, d.cat, d.killed)
	if err != nil {
		return res, err
	}
	res.traffic = &tr
	res.inputs = tr.Verdicts()
	err = d.verify(ctx, settle, adm, conn, exp, res)
	res.unclean = append(res.unclean, d.stopMembers("webenv")...)
	return res, err
}

// inputRecords is the sum of the end offsets of names (records written,
// transaction markers included: a progress figure). ok is false when some
// partition had no answer (its leader is down during a broker fault): a
// partial sum would read as records lost.
func inputRecords(ctx context.Context, adm *kadm.Client, names []string) (n int64, ok bool) {
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err != nil || ends.Error() != nil {
		return 0, false
	}
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n, true
}

// browsersOf returns the pids of the Chromium browser processes that
// process pid started: its children that lead a process group of their
// own (the actor starts each browser in its own group; the browser's
// helpers are its children, not the actor's).
func browsersOf(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f := procstat.Stat(child)
		if f == nil {
			continue
		}
		ppid, pgrp := procstat.Int(f, procstat.PPID), procstat.Int(f, procstat.PGRP)
		if ppid == pid && pgrp == child && f[procstat.State] != "Z" {
			out = append(out, child)
		}
	}
	slices.Sort(out)
	return out
}

// killBrowser kills one of the actor's browsers with SIGKILL and returns
// its pid, the browsers it saw, and a func that waits until the actor runs
// a new one in its place (the recovery the actor owes; the drill restarts
// nothing).
func (d *drillRun) killBrowser(ctx context.Context) (string, func() error, error) {
	m := d.members["actor"][0]
	actorPID := m.p.Cmd.Process.Pid
	before := browsersOf(actorPID)
	if len(before) == 0 {
		return "", nil, fmt.Errorf("no Chromium process of the actor (pid %d) found", actorPID)
	}
	victim := before[0]
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		return "", nil, fmt.Errorf("unable to kill Chromium pid %d: %w", victim, err)
	}
	what := fmt.Sprintf("kill -9 Chromium pid %d, one of the actor's %d browsers (its executors' episodes abort)", victim, len(before))
	back := func() error {
		deadline := time.Now().Add(d.flags.recoveryTimeout)
		for time.Now().Before(deadline) {
			for _, p := range browsersOf(actorPID) {
				if !slices.Contains(before, p) {
					return nil
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-m.p.Done:
				return fmt.Errorf("the actor exited after its browser was killed: %v", m.p.Err)
			case <-time.After(100 * time.Millisecond):
			}
		}
		return fmt.Errorf("the actor did not start a new browser within %s", d.flags.recoveryTimeout)
	}
	return what, back, nil
}
