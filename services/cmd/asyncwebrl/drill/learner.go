package drill

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// drillPolicy is the policy the drill's learner trains and publishes: the
// learner's default, the key of its records on the weights topic.
const drillPolicy = "default"

// hasFault reports whether the schedule holds the fault name.
func (d *drillRun) hasFault(name string) bool {
	return slices.ContainsFunc(d.flags.schedule, func(s scheduled) bool { return s.name == name })
}

// startLearner starts the drill's learner, a process of the binary on the
// drill's transitions topic, with a run directory (its checkpoint) of its
// own that its restart finds again. Small batches and a version every 3
// updates make versions come every few seconds on a loaded machine.
func (d *drillRun) startLearner() error {
	m := &member{name: "learner-1"}
	m.args = append(d.memberArgs(m, "learner"), "-run-dir="+filepath.Join(d.flags.dir, "learner-run"),
		"-curriculum=false", "-batch-size=16", "-publish-every=3")
	if err := d.startMember(m); err != nil {
		return err
	}
	d.members["learner"] = []*member{m}
	d.stopSupervising = d.supervise(m)
	d.say("started a learner (policy %s, lease group %s)", drillPolicy, d.leaseGroup())
	return nil
}

// supervise restarts m whenever it exits without the drill's doing, as
// its supervisor does in a deployment (compose's restart: unless-stopped,
// a Deployment), and says so; the returned func stops supervising. Such an
// exit fails the drill: a broker fault that takes the lease group's
// coordinator away makes the lease uncertain, and the learner pauses its
// publishing until the group answers, without exiting.
func (d *drillRun) supervise(m *member) func() {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			m.mu.Lock()
			p, held := m.p, m.held
			m.mu.Unlock()
			if held {
				select {
				case <-stop:
					return
				case <-time.After(250 * time.Millisecond):
				}
				continue
			}
			select {
			case <-stop:
				return
			case <-p.Done:
			}
			m.mu.Lock()
			if !m.held && m.p == p {
				note := fmt.Sprintf("%s exited on its own at load+%s (%v; its log's last error: %s); restarted, as its supervisor would",
					m.name, time.Since(d.loadStart).Round(time.Second), p.Err, p.LastError())
				d.selfExits = append(d.selfExits, note)
				d.say("%s", note)
				if err := d.startMember(m); err != nil {
					d.say("unable to restart %s: %v", m.name, err)
					m.mu.Unlock()
					return
				}
			}
			m.mu.Unlock()
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(stop); <-done }) }
}

func (d *drillRun) learnerGroup() string { return d.cat.Prefix + "learner" }
func (d *drillRun) leaseGroup() string   { return d.cat.Prefix + "learner-lease-" + drillPolicy }

// drillFrame is the load's frame when a learner runs: a 64x64 JPEG of
// noise, which the learner decodes (the load's default random bytes are
// no image: the learner would dead-letter every transition).
func drillFrame() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.Uint32())
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		return nil, fmt.Errorf("unable to encode the load's frame: %w", err)
	}
	return b.Bytes(), nil
}

// injectLearner is the learner fault: once the learner publishes, kill it
// with SIGKILL, start it again --down later, and time the first version
// published after the last one the dead learner committed. The restarted
// learner leads only once the lease group dropped the dead one (its 6 s
// session), and continues the chain from its checkpoint or the topic.
func (d *drillRun) injectLearner(ctx context.Context, adm *kadm.Client) (faultResult, error) {
	fr := faultResult{name: "learner"}
	m := d.members["learner"][0]
	wctx, cancel := context.WithTimeout(ctx, d.flags.recoveryTimeout)
	_, err := d.weights.NewerThan(wctx, 0, false, 250*time.Millisecond)
	cancel()
	if err != nil {
		return fr, fmt.Errorf("unable to inject the learner fault: no version published in %s: %w", d.flags.recoveryTimeout, err)
	}
	m.mu.Lock()
	m.held = true
	pid := m.p.Cmd.Process.Pid
	m.kill()
	m.mu.Unlock()
	injected := time.Now()
	fr.at = injected.Sub(d.loadStart)
	// What the dead learner committed is visible once the topic is read to
	// its committed end: its open transaction, if any, is not.
	if err := d.weights.CaughtUp(ctx, adm, 250*time.Millisecond); err != nil {
		return fr, err
	}
	var last uint64
	for _, v := range d.weights.Versions() {
		last = max(last, v.Version)
	}
	fr.what = fmt.Sprintf("kill -9 %s (pid %d) after version %d", m.name, pid, last)
	d.say("fault learner: %s", fr.what)
	// A commit the dead learner had sent may still complete: the restarted
	// learner runs under an instance id of its own, the producer of its
	// versions, so its first version is told from a late one of the dead.
	old := d.instance(m)
	d.renew(m)
	select {
	case <-ctx.Done():
		return fr, ctx.Err()
	case <-time.After(time.Until(injected.Add(d.flags.down))):
	}
	m.mu.Lock()
	err = d.startMember(m)
	m.held = false
	m.mu.Unlock()
	if err != nil {
		return fr, err
	}
	fr.back = time.Since(injected)
	d.say("fault learner: running again after %s", fr.back.Round(100*time.Millisecond))
	r := loadtest.Recovery{Group: d.cat.Name(topics.Weights), Resumed: -1, Recovered: -1}
	rctx, cancel := context.WithTimeout(ctx, d.flags.recoveryTimeout)
	defer cancel()
	if v, err := d.weights.FirstBy(rctx, d.instance(m), 250*time.Millisecond); err == nil {
		r.Resumed = v.Seen.Sub(injected)
		r.Recovered = r.Resumed
		for _, w := range d.weights.Versions() {
			if w.Producer == old {
				last = max(last, w.Version)
			}
		}
		fr.what = fmt.Sprintf("kill -9 %s (pid %d) after version %d", m.name, pid, last)
		d.say("fault learner: version %d (parent %d) published by the restarted learner after %s; the dead one's last was %d",
			v.Version, v.Parent, roundDur(r.Recovered), last)
	} else {
		d.say("fault learner: no version from the restarted learner within %s of the restart", d.flags.recoveryTimeout)
	}
	fr.recoveries = []loadtest.Recovery{r}
	return fr, ctx.Err()
}
