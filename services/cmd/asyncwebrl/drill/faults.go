package drill

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/asyncwebrl/asyncwebrl/infra/launch"
	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

// member is one joiner or recorder process of the drill.
type member struct {
	name string // joiner-1, recorder-2, ...
	args []string
	p    *launch.Process
	// restarts counts the restarts under an instance id of their own (the
	// learner's: its versions name their producer; the actor's: its
	// events do, and the killed one's cut tails are told by it).
	restarts int
	// mu guards p and held for a supervised member (the learner), which
	// supervise restarts when it exits while not held: held while the
	// drill kills, restarts or stops it itself.
	mu   sync.Mutex
	held bool
	// byDrill: the drill killed or stopped it (it is not an exit of its own).
	byDrill atomic.Bool
	// pmu guards p against the progress lines' reads (exited) while a
	// fault restarts m.
	pmu sync.Mutex
}

// renew gives m's next start an instance id of its own (<name>.<n>): what
// it produces is then told from what its killed predecessor did.
func (d *drillRun) renew(m *member) {
	m.restarts++
	for i, a := range m.args {
		if strings.HasPrefix(a, "-instance-id=") {
			m.args[i] = "-instance-id=" + d.instance(m)
		}
	}
}

// drillMemberEnv is added to the members' environment: the recorder's
// group session timeout down to the joiner's 10 s default (franz-go's 45 s
// would hold a killed member's partitions that long), unless set.
func drillMemberEnv(getenv func(string) string) []string {
	if getenv("ASYNCWEBRL_RECORDER_SESSION_TIMEOUT") != "" {
		return []string{}
	}
	return []string{"ASYNCWEBRL_RECORDER_SESSION_TIMEOUT=10s"}
}

func (d *drillRun) startMembers() error {
	d.members = map[string][]*member{}
	for _, role := range []string{"joiner", "recorder"} {
		for i := 1; i <= d.flags.members; i++ {
			m := &member{name: role + "-" + strconv.Itoa(i)}
			m.args = d.memberArgs(m, role)
			if err := d.startMember(m); err != nil {
				return err
			}
			d.members[role] = append(d.members[role], m)
		}
	}
	d.say("started %d joiner and %d recorder members (processes of %s)", d.flags.members, d.flags.members, d.flags.bin)
	return nil
}

// memberArgs are the command line of member m running target role: the
// drill's cluster, topics and database.
func (d *drillRun) memberArgs(m *member, role string) []string {
	cfg := d.cfg
	args := append([]string{"-log-level=info", "-stop-timeout=60s"}, d.rest...)
	return append(args, "-target="+role, "-instance-id="+d.instance(m),
		"-brokers="+strings.Join(cfg.Brokers, ","), "-topic-prefix="+d.cat.Prefix,
		"-topic-partitions="+strconv.Itoa(cfg.TopicPartitions), "-topic-replication="+strconv.Itoa(cfg.TopicReplication),
		"-apply-topics=false", "-admin-addr=127.0.0.1:0",
		"-clickhouse-addr="+d.clickHouseAddr(), "-clickhouse-database="+d.db)
}

// instance is m's -instance-id, the prefix of its Kafka client ids.
func (d *drillRun) instance(m *member) string {
	if m.restarts > 0 {
		return "drill-" + d.id + "-" + m.name + "." + strconv.Itoa(m.restarts)
	}
	return "drill-" + d.id + "-" + m.name
}

// clickHouseAddr is where the members reach ClickHouse: its proxy when a
// clickhouse-latency fault is scheduled.
func (d *drillRun) clickHouseAddr() string {
	if d.chProxy != nil {
		return d.chProxy.Addr()
	}
	return d.cfg.ClickHouse.Addr
}

// startMember starts m, in its lab host's namespace when it has one.
func (d *drillRun) startMember(m *member) error {
	bin, args := d.flags.bin, m.args
	if h := d.host(m); h != "" {
		bin, args = d.lab.Command(h, bin, args...)
	}
	p, err := launch.StartProcess(bin, d.flags.dir, m.name, d.env, args...)
	if err != nil {
		return err
	}
	m.pmu.Lock()
	m.p = p
	m.pmu.Unlock()
	m.byDrill.Store(false)
	return nil
}

// kill kills m with SIGKILL and waits until it is gone.
func (m *member) kill() {
	m.byDrill.Store(true)
	select {
	case <-m.p.Done:
		return
	default:
	}
	_ = m.p.Cmd.Process.Kill()
	<-m.p.Done
}

// killMembers kills whatever member still runs (the drill failed early).
func (d *drillRun) killMembers() {
	if d.stopSupervising != nil {
		d.stopSupervising() // or the learner comes back
	}
	for _, ms := range d.members {
		for _, m := range ms {
			m.kill()
		}
	}
}

// stopMembers stops every member of roles with SIGTERM, all at once, and
// returns those that did not exit cleanly within their stop timeout (or
// had exited before).
func (d *drillRun) stopMembers(roles ...string) []string {
	var all []*member
	for _, role := range roles {
		all = append(all, d.members[role]...)
	}
	early := map[string]error{}
	for _, m := range all {
		select {
		case <-m.p.Done:
			early[m.name] = m.p.Err
		default:
			m.byDrill.Store(true)
			_ = m.p.Cmd.Process.Signal(stopSignal)
		}
	}
	var unclean []string
	for _, m := range all {
		if err, ok := early[m.name]; ok {
			unclean = append(unclean, fmt.Sprintf("%s (exited during the drill: %v; its log's last error: %s)", m.name, err, m.p.LastError()))
			continue
		}
		select {
		case <-m.p.Done:
			if m.p.Err != nil {
				unclean = append(unclean, fmt.Sprintf("%s (%v)", m.name, m.p.Err))
			}
		case <-time.After(90 * time.Second):
			m.kill()
			unclean = append(unclean, m.name+" (still running 90s after SIGTERM)")
		}
	}
	d.say("%s stopped (SIGTERM): %d of %d cleanly", strings.Join(roles, ", "), len(all)-len(unclean), len(all))
	return unclean
}

// faultResult is one injected fault and how the pipeline took it.
type faultResult struct {
	name, what string
	// at is when it was injected, from the load's start; back how long
	// after that the component was running again.
	at, back   time.Duration
	recoveries []loadtest.Recovery
}

func (f faultResult) ok() bool {
	for _, r := range f.recoveries {
		if !r.OK() {
			return false
		}
	}
	return len(f.recoveries) > 0
}

// inject runs one fault: note the groups' offsets, kill, wait --down,
// start again, and wait until every affected group recovered (or
// --recovery-timeout after the restart).
func (d *drillRun) inject(ctx context.Context, adm *kadm.Client, s scheduled) (faultResult, error) {
	if s.name == "learner" {
		return d.injectLearner(ctx, adm)
	}
	fr := faultResult{name: s.name}
	groups := []string{d.joinerGroup(), d.recorderGroup()}
	switch s.name {
	case "joiner", "joiner-latency":
		groups = groups[:1]
	case "recorder", "clickhouse", "clickhouse-latency":
		groups = groups[1:]
	}
	base := map[string]topics.GroupLag{}
	for _, g := range groups {
		// A young cluster's group coordinator may still be loading (a
		// loaded machine): asked again for a minute before giving up.
		var lag topics.GroupLag
		var err error
		for try := 0; try < 60 && ctx.Err() == nil; try++ {
			if lag, err = loadtest.Offsets(ctx, adm, g, d.cat.Inputs()); err == nil {
				break
			}
			time.Sleep(time.Second)
		}
		if err != nil {
			return fr, fmt.Errorf("unable to read group %s's offsets before the %s fault: %w", g, s.name, err)
		}
		base[g] = lag
	}

	var restore func() error
	var settled func(context.Context) (bool, error)
	down := d.flags.down
	written := int64(-1) // the inputs' records at an actor's kill or cut
	var err error
	switch s.name {
	case "broker":
		node, led, err := d.pickBroker(ctx, adm)
		if err != nil {
			return fr, err
		}
		if err := d.cluster.Crash(int(node)); err != nil {
			return fr, err
		}
		fr.what = fmt.Sprintf("kill -9 broker %d (%s%s)", node, d.cluster.Addrs[node-1], led)
		restore = func() error { return d.cluster.StartNode(int(node)) }
	case "broker-partition", "actor-partition", "joiner-latency", "clickhouse-latency":
		var node int32
		var led string
		if s.name == "broker-partition" {
			if node, led, err = d.pickBroker(ctx, adm); err != nil {
				return fr, err
			}
		}
		if s.name == "actor-partition" {
			// The groups go on with what the actor wrote before the cut;
			// the fault is over once the healed actor's records land.
			written = d.inputsNow(ctx, adm)
		}
		var healed *atomic.Bool
		if fr.what, restore, healed, err = d.injectNetwork(s.name, node, led); err != nil {
			return fr, err
		}
		w := written
		settled = func(ctx context.Context) (bool, error) {
			if !healed.Load() {
				return false, nil
			}
			if w < 0 {
				return true, nil
			}
			n, ok := inputRecords(ctx, adm, d.cat.Inputs())
			return ok && n > w, nil
		}
		down = d.flags.netDown
	case "joiner", "recorder", "actor":
		m := d.members[s.name][0]
		held := ""
		if s.name != "actor" {
			held = ", holding ? of the input partitions"
			if id, n, err := loadtest.Member(ctx, adm, groups[0], d.instance(m)+"/", d.cat.Inputs()); err == nil && id != "" {
				held = fmt.Sprintf(", holding %d of %d input partitions", n, len(base[groups[0]].Partitions))
				settled = loadtest.Evicted(adm, groups[0], id)
			}
		}
		pid := m.p.Cmd.Process.Pid
		m.kill()
		fr.what = fmt.Sprintf("kill -9 %s (pid %d%s)", m.name, pid, held)
		restore = func() error { return d.startMember(m) }
		if s.name == "actor" {
			// Its in-flight tail died with it: the verdict counts its
			// episodes' missing tails as cut, by its instance id.
			d.killed = append(d.killed, d.instance(m))
			d.renew(m)
			// The groups go on with what the dead actor wrote before its
			// kill: the actor's own recovery is its first new record.
			// The dead actor writes nothing more: asking again while the
			// cluster does not answer reads the same count.
			written = d.inputsNow(ctx, adm)
		}
	case "chromium":
		// The actor restarts its browser itself: no down time is imposed.
		what, back, err := d.killBrowser(ctx)
		if err != nil {
			return fr, err
		}
		fr.what, restore, down = what, back, 0
	case "clickhouse":
		if err := d.ch.Down(); err != nil {
			return fr, err
		}
		fr.what = "stop ClickHouse " + d.ch.Addr
		var back atomic.Bool
		settled = func(context.Context) (bool, error) { return back.Load(), nil }
		restore = func() error {
			err := d.ch.Up()
			back.Store(err == nil)
			return err
		}
	default:
		return fr, fmt.Errorf("unknown fault %q", s.name)
	}
	injected := time.Now()
	fr.at = injected.Sub(d.loadStart)
	d.say("fault %s: %s", s.name, fr.what)
	if s.name == "clickhouse" {
		// The stop took a while, during which the recorder still
		// committed: its progress counts from now.
		if lag, err := loadtest.Offsets(ctx, adm, groups[0], d.cat.Inputs()); err == nil {
			base[groups[0]] = lag
		}
	}

	wctx, cancel := context.WithTimeout(ctx, d.flags.down+d.flags.recoveryTimeout+90*time.Second)
	defer cancel()
	fr.recoveries = make([]loadtest.Recovery, len(groups))
	var wg sync.WaitGroup
	for i, g := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fr.recoveries[i] = loadtest.WatchRecovery(wctx, adm, g, d.cat.Inputs(), injected, base[g], 250*time.Millisecond, settled)
		}()
	}
	select {
	case <-ctx.Done():
		return fr, ctx.Err()
	case <-time.After(down):
	}
	if err := restore(); err != nil {
		return fr, err
	}
	fr.back = time.Since(injected)
	d.say("fault %s: running again after %s", s.name, fr.back.Round(100*time.Millisecond))
	// Past the restart, a fault has --recovery-timeout to recover.
	go func() {
		select {
		case <-wctx.Done():
		case <-time.After(d.flags.recoveryTimeout):
			cancel()
		}
	}()
	inputs := loadtest.Recovery{Group: d.cat.Prefix + "inputs", Resumed: -1, Recovered: -1}
	if written >= 0 {
		wg.Add(1)
		r := &inputs
		go func() {
			defer wg.Done()
			for wctx.Err() == nil {
				if n, ok := inputRecords(wctx, adm, d.cat.Inputs()); ok && n > written {
					r.Resumed = time.Since(injected)
					r.Recovered = r.Resumed
					return
				}
				select {
				case <-wctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
		}()
	}
	wg.Wait()
	if written >= 0 {
		fr.recoveries = append(fr.recoveries, inputs)
	}
	for _, r := range fr.recoveries {
		if r.OK() {
			d.say("fault %s: %s resumed after %s, recovered after %s", s.name, strings.TrimPrefix(r.Group, d.cat.Prefix),
				roundDur(r.Resumed), roundDur(r.Recovered))
		} else {
			d.say("fault %s: %s did NOT recover within %s of the restart", s.name, strings.TrimPrefix(r.Group, d.cat.Prefix), d.flags.recoveryTimeout)
		}
	}
	if ctx.Err() != nil {
		return fr, ctx.Err()
	}
	return fr, nil
}

// pickBroker is the broker a broker fault hits: the one leading the most
// partitions, or, when a learner runs, its lease group's coordinator (the
// learner must ride it out leading). led describes it for the fault line.
func (d *drillRun) pickBroker(ctx context.Context, adm *kadm.Client) (int32, string, error) {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	node, led, err := loadtest.BusiestLeader(lctx, adm)
	if err != nil {
		return 0, "", err
	}
	total := 0
	for _, n := range led {
		total += n
	}
	role := ""
	if d.weights != nil {
		if node, err = loadtest.GroupCoordinator(lctx, adm, d.leaseGroup()); err != nil {
			return 0, "", err
		}
		role = ", the learner lease group's coordinator"
	}
	return node, fmt.Sprintf("%s, leader of %d of %d partitions", role, led[node], total), nil
}

// inputsNow is the input topics' record count, asked again while the
// cluster does not answer (after a fault, nothing the drill hurt writes
// more: a later answer reads the same count); -1 when it never answered,
// and the inputs' recovery is then not measured.
func (d *drillRun) inputsNow(ctx context.Context, adm *kadm.Client) int64 {
	for try := 0; try < 20 && ctx.Err() == nil; try++ {
		if n, ok := inputRecords(ctx, adm, d.cat.Inputs()); ok {
			return n
		}
		time.Sleep(250 * time.Millisecond)
	}
	d.say("the cluster did not say how many input records there were at the fault: the inputs' recovery is not measured")
	return -1
}

func roundDur(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return d.Round(100 * time.Millisecond).String()
}

// printFaults writes one line per fault and affected group.
func printFaults(w io.Writer, faults []faultResult) {
	if len(faults) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "fault\tinjected at\tback after\tgroup\tresumed after\trecovered after\t\twhat")
	for _, f := range faults {
		for i, r := range f.recoveries {
			mark := "ok"
			if !r.OK() {
				mark = "NOT RECOVERED"
			}
			group := r.Group[strings.LastIndex(r.Group, ".")+1:]
			if i == 0 {
				fmt.Fprintf(tw, "%s\tload+%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.name, f.at.Round(time.Second), roundDur(f.back), group, roundDur(r.Resumed), roundDur(r.Recovered), mark, f.what)
			} else {
				fmt.Fprintf(tw, "\t\t\t%s\t%s\t%s\t%s\t\n", group, roundDur(r.Resumed), roundDur(r.Recovered), mark)
			}
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "resumed: the group's first committed offset advance after the fault; recovered: every input partition advanced")
	fmt.Fprintln(w, "(after a member's kill: by a live member, once the group had dropped the dead one; after a ClickHouse stop: once it was back); both from the fault")
	if slices.ContainsFunc(faults, func(f faultResult) bool { return slices.Contains(netFaults, f.name) }) {
		fmt.Fprintln(w, "(after a network fault: back after is when the link was healed or the toxic removed; recovered counts only from then on,")
		fmt.Fprintln(w, " after an actor's partition once its records landed again)")
	}
	if slices.ContainsFunc(faults, func(f faultResult) bool { return f.name == "learner" }) {
		fmt.Fprintln(w, "(after the learner's kill, weights: the first version published after the dead learner's last, from the fault)")
	}
	if slices.ContainsFunc(faults, func(f faultResult) bool { return f.name == "actor" }) {
		fmt.Fprintln(w, "(after the actor's kill, inputs: the first record the restarted actor wrote, from the fault; the groups go on with what it wrote before)")
	}
	if slices.ContainsFunc(faults, func(f faultResult) bool { return f.name == "chromium" }) {
		fmt.Fprintln(w, "(after a browser's kill, back after: when the actor ran a new browser in its place; the other browser's executors go on meanwhile)")
	}
}
