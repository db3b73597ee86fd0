package drill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/infra/launch"
	"github.com/asyncwebrl/asyncwebrl/infra/netlab"
	"github.com/asyncwebrl/asyncwebrl/loadtest"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

const drillUsage = `Usage: asyncwebrl drill [--synthetic[=false]] [--rate R] [--executors N] [--schedule S] [--down D] [--tail D] [flags]
       asyncwebrl drill matrix [--repeat N] [--runs a,b] [flags]   (several schedules, repeated: drill matrix --help)
  A fault drill with a verdict. Runs the pipeline on a three-broker KRaft
  cluster of its own (infra/kafka.sh from the repository's jars, on free
  loopback ports, stopped at the end; -brokers to use an existing cluster
  instead), with the synthetic actor traffic of loadtest/ (10% reordered,
  5% duplicated, 1% malformed) or, with --synthetic=false, real actors
  (a webenv and an actor process of this binary, --executors executors in
  two headless Chromium processes, acting with the initial policy on the
  -suite's tasks), the joiner and the recorder as separate processes of
  this binary (--members of each), and injects the faults of the
  schedule, one after the other, each killed with SIGKILL and, --down
  later, started again. The load runs until the last fault has recovered
  and --tail more (real actors are then stopped with SIGTERM, which ends
  their episodes); then the drill waits for the joiner and the recorder to
  catch up and counts. The faults:
    broker      the broker that leads the most partitions, or, when a learner runs,
                the learner lease group's coordinator (needs the drill's own
                cluster); the learner must keep leading through it, unrestarted
    joiner      joiner member 1
    recorder    recorder member 1
    learner     the learner: with this fault the drill runs one (-target=learner,
                policy default, on the drill's transitions; the load's frames are
                then a small JPEG it can decode), killed once it has published;
                its recovery is the first version published after the dead one's
                last, and the weights topic's verdict is one chain of versions
                (each version's parent the one before: none skipped, repeated
                or forked); the learner is stopped once the joiner caught up,
                before the recorder's audit (it would go on publishing from its
                replay); its restart runs under instance id <id>.1, so its first
                version is told from a late commit of the dead one
    clickhouse  ClickHouse stopped and started again (needs --private-clickhouse:
                the shared server is never stopped)
    actor       the actor process (real actors only): its open episodes end
                unfinished; the restarted actor starts new ones under an
                instance id of its own (<id>.1); what the killed one had in
                flight is its cut tail, counted apart from losses
    chromium    one of the actor's two Chromium browser processes (real actors
                only): the actor records its executors' episodes as aborted and
                starts a new browser itself (nothing is restarted by the drill;
                "back after" is when the new browser runs)
  Network faults last --net-down (nothing is killed). With any of the first
  three the drill's own cluster is built across network namespaces it makes
  (infra/netlab: a bridge in a namespace of its own, veth pairs, 10.231.x.0/24,
  nothing outside this machine): each broker in one, the joiner members in
  one, real actors with their webenv and browsers in one; the drill, the
  recorder and the learner stay outside, linked to the bridge. Clients reach
  each broker through a proxy of the drill (its advertised address); brokers
  reach each other and the quorum directly. Where namespaces are refused the
  drill says so in one line and skips those three.
    broker-partition    the broker broker would hit, its link taken down: cut off
                        from the other brokers, the controller quorum and every
                        client, still running
    actor-partition     the actors' namespace cut off from every broker (real
                        actors only); recovered once their records land again
    joiner-latency      --latency each way and --loss segment loss between the
                        joiner members and every broker (the proxies' toxic)
    clickhouse-latency  --latency each way between the members and ClickHouse
                        (a proxy; no namespaces needed)
  Progress lines go to stdout. At the end it prints a verdict per topic
  (records: the load's deliberate duplicates are records like any other)
  and per ClickHouse table (distinct events) with expected, found, lost and
  duplicated. With real actors nobody counted what was sent: the input
  topics are the reference: an input's lost events are acknowledged data
  missing (an event absent while its topic holds a later one of the
  episode: an episode's events of one topic share a partition, which an
  idempotent producer fills in order; or any event missing from an episode
  of an actor that was not killed), its cut events, apart, the in-flight
  tail of a killed actor (absent with nothing later of the episode on
  their topic: never acknowledged, not lost; their episodes must get no
  terminal transition, so the learner never trains on them), its
  duplicates repeated event ids. What the joiner must make of them is
  derived from them by the joiner's rules (loadtest.ExpectTraffic; steps
  the joiner dead-lettered are accounted for by their dead letters,
  counted by reason). Per fault it prints the time until each affected group made
  progress again, from the fault: resumed (its first committed offset
  advance) and recovered (every input partition advanced; after a member's
  kill, by a live member once the group had dropped the dead one; after a
  ClickHouse stop, once it was back). Exit 1
  on any loss, duplicate, mismatch, unrecovered fault, unclean stop or
  learner exit of its own.
  Topics are <prefix>* with a prefix of the drill's own (drill_<id>.), the
  database drill_<id> on -clickhouse-addr (-clickhouse-database is not
  used); both are deleted at the end unless --keep. The members' logs are
  in --dir.
  --synthetic          synthetic traffic (default); --synthetic=false: real actors
  --rate R             synthetic records per second (default 300)
  --executors N        real actors' executors (default 4)
  --schedule S         faults and when, after the load starts: name@offset,...
                       (default broker@20s,joiner@60s,recorder@100s,learner@140s;
                       with real actors broker@20s,joiner@50s,recorder@80s,actor@110s,chromium@150s);
                       a fault waits for the previous one to recover
  --down D             how long a killed component stays down (default 10s)
  --tail D             load after the last fault recovered (default 15s)
  --members N          joiner and recorder members each (default 2)
  --nodes N            brokers of the drill's own cluster (default 3)
  --net-down D         how long a network fault lasts (default 60s)
  --latency D          the latency faults' delay, each way (default 200ms)
  --loss P             joiner-latency's probability that a segment is lost: it then
                       waits a retransmission timeout, 200ms + twice --latency, and
                       the stream behind it too, as TCP would (default 0.05)
  --recovery-timeout D a fault that has not recovered D after its restart fails
                       the drill (default 3m)
  --private-clickhouse start a ClickHouse of the drill's own (infra/clickhouse.sh on
                       free ports) instead of using -clickhouse-addr
  --dir DIR            where the members' logs and the cluster's data go (default
                       a new temporary directory, removed after a passing drill)
  --bin PATH           the asyncwebrl binary the members run (default this one)
  --keep               keep the topics, the database and --dir
Flags: -brokers (an existing cluster: no broker fault), -topic-partitions (6),
-topic-replication (3 on the drill's cluster), -clickhouse-addr, the Kafka
security flags; the members get them too. The recorder members run with a
10 s group session timeout (ASYNCWEBRL_RECORDER_SESSION_TIMEOUT overrides it),
the joiner's default, so a killed member's partitions do not wait 45 s.
`

// drillFlags are drill's own flags.
type drillFlags struct {
	members, nodes, executors int
	// real: real actors instead of the synthetic load.
	real                        bool
	rate                        float64
	schedule                    []scheduled
	down, tail, recoveryTimeout time.Duration
	// netDown is how long a network fault lasts; latency and loss are the
	// toxics' (joiner-latency, clickhouse-latency).
	netDown, latency  time.Duration
	loss              float64
	privateClickHouse bool
	keep              bool
	dir, bin          string
}

// scheduled is one fault of the schedule.
type scheduled struct {
	name string
	at   time.Duration
}

var drillFaults = append([]string{"broker", "joiner", "recorder", "learner", "clickhouse", "actor", "chromium"}, netFaults...)

func parseDrillFlags(args []string) (drillFlags, []string, error) {
	d := drillFlags{rate: 300, members: 2, nodes: 3, executors: 4, down: 10 * time.Second, tail: 15 * time.Second, recoveryTimeout: 3 * time.Minute,
		netDown: time.Minute, latency: 200 * time.Millisecond, loss: 0.05}
	vals, rest, err := cmdkit.SubFlags(args, []string{"rate", "schedule", "down", "tail", "members", "nodes", "executors", "recovery-timeout", "dir", "bin",
		"net-down", "latency", "loss"},
		[]string{"synthetic", "private-clickhouse", "keep"})
	if err != nil {
		return d, nil, err
	}
	if v, ok := vals["synthetic"]; ok {
		switch v {
		case "true":
		case "false":
			d.real = true
		default:
			return d, nil, fmt.Errorf("invalid --synthetic=%s: want true or false", v)
		}
	}
	for name, dst := range map[string]*int{"members": &d.members, "nodes": &d.nodes, "executors": &d.executors} {
		if v, ok := vals[name]; ok {
			if *dst, err = strconv.Atoi(v); err != nil || *dst < 1 {
				return d, nil, fmt.Errorf("invalid --%s %q: want a positive integer", name, v)
			}
		}
	}
	if d.nodes > 9 {
		return d, nil, fmt.Errorf("invalid --nodes %d: want 1..9", d.nodes)
	}
	if v, ok := vals["rate"]; ok {
		if d.rate, err = strconv.ParseFloat(v, 64); err != nil || d.rate <= 0 {
			return d, nil, fmt.Errorf("invalid --rate %q: want a positive number", v)
		}
	}
	if v, ok := vals["loss"]; ok {
		if d.loss, err = strconv.ParseFloat(v, 64); err != nil || d.loss < 0 || d.loss >= 1 {
			return d, nil, fmt.Errorf("invalid --loss %q: want a probability in [0, 1)", v)
		}
	}
	for name, dst := range map[string]*time.Duration{"down": &d.down, "tail": &d.tail, "recovery-timeout": &d.recoveryTimeout,
		"net-down": &d.netDown, "latency": &d.latency} {
		if v, ok := vals[name]; ok {
			if *dst, err = time.ParseDuration(v); err != nil || *dst <= 0 {
				return d, nil, fmt.Errorf("invalid --%s %q: want a positive duration like 10s", name, v)
			}
		}
	}
	sched := "broker@20s,joiner@60s,recorder@100s,learner@140s"
	if d.real {
		sched = "broker@20s,joiner@50s,recorder@80s,actor@110s,chromium@150s"
	}
	if v, ok := vals["schedule"]; ok {
		sched = v
	}
	if d.schedule, err = parseSchedule(sched); err != nil {
		return d, nil, err
	}
	d.privateClickHouse, d.keep = vals["private-clickhouse"] == "true", vals["keep"] == "true"
	d.dir, d.bin = vals["dir"], vals["bin"]
	for _, f := range d.schedule {
		if f.name == "clickhouse" && !d.privateClickHouse {
			return d, nil, errors.New("the clickhouse fault needs --private-clickhouse: the drill never stops the shared ClickHouse")
		}
		if (f.name == "actor" || f.name == "chromium" || f.name == "actor-partition") && !d.real {
			return d, nil, fmt.Errorf("the %s fault needs real actors (--synthetic=false)", f.name)
		}
	}
	return d, rest, nil
}

// parseSchedule reads name@offset,... in any order and returns it by offset.
func parseSchedule(s string) ([]scheduled, error) {
	var out []scheduled
	for _, item := range config.SplitList(s) {
		name, at, ok := strings.Cut(item, "@")
		if !ok || !slices.Contains(drillFaults, name) {
			return nil, fmt.Errorf("invalid --schedule item %q: want name@offset with name one of %s", item, strings.Join(drillFaults, ", "))
		}
		d, err := time.ParseDuration(at)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("invalid --schedule item %q: want an offset like 20s", item)
		}
		out = append(out, scheduled{name, d})
	}
	slices.SortStableFunc(out, func(a, b scheduled) int { return int(a.at - b.at) })
	return out, nil
}

// drillResult is what a drill found.
type drillResult struct {
	inputs, outputs, tables []loadtest.Verdict
	report                  loadtest.Report
	audit                   loadtest.Audit
	faults                  []faultResult
	// unclean names the members that did not stop cleanly on SIGTERM.
	unclean []string
	// versions is the weights topic's chain when a learner ran, else nil.
	versions *loadtest.VersionCheck
	// selfExits are the learner's exits of its own, each restarted as its
	// supervisor would. A failure: a learner rides out every fault of the
	// drill (a broker's kill makes its lease uncertain, not lost).
	selfExits []string
	// traffic is what real actors wrote (nil for the synthetic load).
	traffic *loadtest.Traffic
}

// OK: nothing lost, duplicated or wrong, every fault recovered, every
// member stopped cleanly.
func (r *drillResult) OK() bool {
	for _, vs := range [][]loadtest.Verdict{r.inputs, r.outputs, r.tables} {
		for _, v := range vs {
			if !v.OK() {
				return false
			}
		}
	}
	for _, f := range r.faults {
		if !f.ok() {
			return false
		}
	}
	if r.versions != nil && !r.versions.OK() {
		return false
	}
	return r.report.OK() && r.audit.OK() && len(r.unclean) == 0 && len(r.selfExits) == 0
}

// Run is the drill command (args after "drill"): one drill, or with
// "matrix" first several schedules, repeated.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "matrix" {
		return runMatrix(ctx, args[1:], stdout, stderr)
	}
	_, err := drill(ctx, args, stdout, stderr)
	return err
}

// errDrillFailed: the drill ran, and its verdict failed.
var errDrillFailed = errors.New("the drill failed (see its verdict above)")

// drill is the drill command, returning what it found (nil for -help or
// when it could not run).
func drill(ctx context.Context, args []string, stdout, stderr io.Writer) (*drillResult, error) {
	if cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, drillUsage)
		return nil, nil
	}
	df, rest, err := parseDrillFlags(args)
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	ownCluster := !cmdkit.ArgGiven(rest, "brokers")
	if ownCluster && !cmdkit.ArgGiven(rest, "topic-replication") {
		rest = append(rest, "-topic-replication="+strconv.Itoa(min(3, df.nodes)))
	}
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return nil, err
	}
	if cfg.Embedded() {
		return nil, cmdkit.Usage(errors.New("drill needs real brokers (omit -brokers for a cluster of its own)"))
	}
	for _, f := range df.schedule {
		if (f.name == "broker" || slices.Contains(labFaults, f.name)) && !ownCluster {
			return nil, cmdkit.Usage(fmt.Errorf("the %s fault needs the drill's own cluster: omit -brokers, or leave %s out of --schedule", f.name, f.name))
		}
	}
	if df.bin == "" {
		if df.bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("unable to find this binary: %w", err)
		}
	}
	id := cmdkit.RandomID()
	if df.dir == "" {
		if df.dir, err = os.MkdirTemp("", "asyncwebrl-drill-"+id+"-"); err != nil {
			return nil, fmt.Errorf("unable to create the drill's directory: %w", err)
		}
	} else if err := os.MkdirAll(df.dir, 0o755); err != nil {
		return nil, fmt.Errorf("unable to create the drill's directory: %w", err)
	}
	d := &drillRun{flags: df, cfg: cfg, rest: rest, env: drillMemberEnv(os.Getenv), id: id, out: stdout, start: time.Now()}
	if d.needsLab() {
		if why := netlab.Available(); why != nil {
			d.flags.schedule = dropLabFaults(d.flags.schedule, why, d.say)
		}
	}
	res, err := d.run(ctx, ownCluster)
	if res != nil {
		printDrill(stdout, res)
	}
	switch {
	case err != nil:
		fmt.Fprintf(stdout, "logs kept in %s\n", df.dir)
		return res, err
	case !res.OK():
		fmt.Fprintf(stdout, "logs kept in %s\n", df.dir)
		return res, errDrillFailed
	case df.keep && d.cluster != nil:
		fmt.Fprintf(stdout, "kept: database %s, directory %s (the stopped cluster's data in %s)\n", d.db, df.dir, filepath.Join(df.dir, "cluster"))
	case df.keep:
		fmt.Fprintf(stdout, "kept: topics %s*, database %s, directory %s\n", d.cat.Prefix, d.db, df.dir)
	default:
		_ = os.RemoveAll(df.dir)
	}
	fmt.Fprintln(stdout, "drill passed: nothing lost, nothing duplicated, every fault recovered")
	return res, nil
}

// drillRun is one drill's state.
type drillRun struct {
	flags drillFlags
	cfg   *config.Config
	rest  []string // the binary's flags, passed on to the members
	env   []string // added to the members' environment
	id    string
	out   io.Writer
	start time.Time
	// loadStart is when the load began: the schedule's origin.
	loadStart time.Time
	cluster   *launch.Cluster    // nil on an existing cluster
	ch        *launch.ClickHouse // nil on the configured server
	f         *kafka.Factory
	cat       *topics.Catalog
	db        string
	members   map[string][]*member
	sent      atomic.Int64
	// weights follows the weights topic when a learner runs.
	weights *loadtest.WeightsWatch
	// stopSupervising ends the learner's supervision (supervise);
	// selfExits are the learner's exits it restarted.
	stopSupervising func()
	selfExits       []string
	// killed are the instance ids of the actors killed with SIGKILL.
	killed []string
	// lab is the network lab (nil without network faults);
	// brokerProxies are the proxies clients reach node i+1 by; chProxy is
	// ClickHouse's for the members (nil without clickhouse-latency).
	lab           *netlab.Lab
	brokerProxies []*netlab.Proxy
	chProxy       *netlab.Proxy
}

func (d *drillRun) say(format string, args ...any) {
	fmt.Fprintf(d.out, "drill %6s  %s\n", "t+"+time.Since(d.start).Round(time.Second).String(), fmt.Sprintf(format, args...))
}

func (d *drillRun) newClient(opts ...kgo.Opt) (*kgo.Client, error) {
	return d.f.NewClient("drill", opts...)
}

func (d *drillRun) run(ctx context.Context, ownCluster bool) (*drillResult, error) {
	cfg, df := d.cfg, d.flags
	cwd, _ := os.Getwd()
	if ownCluster || df.privateClickHouse {
		repo, err := launch.FindRepo(cwd)
		if err != nil {
			return nil, err
		}
		if ownCluster {
			d.cluster = launch.NewCluster(filepath.Join(df.dir, "cluster"), repo, df.nodes)
			if d.needsLab() {
				// Registered before the cluster's Down: the lab goes after it.
				closeLab, err := d.buildLab()
				if err != nil {
					return nil, err
				}
				defer closeLab()
			}
			d.say("starting a %d-broker cluster on %s (infra/kafka.sh, data in %s)", df.nodes, strings.Join(d.cluster.Addrs, ","), filepath.Join(df.dir, "cluster"))
			defer func() {
				if err := d.cluster.Down(); err != nil {
					d.say("%v", err)
				}
			}()
			if err := d.cluster.Up(); err != nil {
				return nil, err
			}
			cfg.Brokers = d.cluster.Addrs
		}
		if df.privateClickHouse {
			d.ch = launch.NewClickHouse(filepath.Join(df.dir, "clickhouse"), repo)
			d.say("starting a ClickHouse of the drill's own on %s", d.ch.Addr)
			defer func() {
				if err := d.ch.Down(); err != nil {
					d.say("%v", err)
				}
			}()
			if err := d.ch.Up(); err != nil {
				return nil, err
			}
			cfg.ClickHouse.Addr = d.ch.Addr
		}
	}
	if d.hasFault("clickhouse-latency") {
		p, err := netlab.Listen("127.0.0.1:0", cfg.ClickHouse.Addr)
		if err != nil {
			return nil, err
		}
		defer p.Close()
		d.chProxy = p
		d.say("the members reach ClickHouse through a proxy on %s", p.Addr())
	}
	d.f = kafka.NewFactory(cfg, cfg.Brokers, nil)
	if err := d.f.Ping(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	admin, err := d.newClient()
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	adm := kadm.NewClient(admin)

	d.cat = cmdkit.Catalog(cfg, "drill_"+d.id+".")
	if _, err := topics.Apply(ctx, admin, d.cat); err != nil {
		return nil, err
	}
	d.db = "drill_" + d.id
	chCfg := cmdkit.ClickHouse(cfg)
	chCfg.Database = ""
	conn, err := analytics.Open(ctx, chCfg)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := analytics.Migrate(ctx, conn, d.db); err != nil {
		return nil, err
	}
	if !df.keep {
		defer d.cleanUp(adm, conn)
	}
	d.say("topics %s* (%d partitions, replication %d), database %s on %s, logs in %s",
		d.cat.Prefix, cfg.TopicPartitions, cfg.TopicReplication, d.db, cfg.ClickHouse.Addr, df.dir)

	if err := d.startMembers(); err != nil {
		return nil, err
	}
	defer d.killMembers()
	var frame []byte
	if d.hasFault("learner") {
		if frame, err = drillFrame(); err != nil {
			return nil, err
		}
		if d.weights, err = loadtest.WatchWeights(d.newClient, d.cat.Name(topics.Weights), drillPolicy); err != nil {
			return nil, err
		}
		defer d.weights.Close()
		if err := d.startLearner(); err != nil {
			return nil, err
		}
	}

	if df.real {
		return d.runReal(ctx, adm, conn)
	}

	// The load has no size: it runs until the faults are done (Stop).
	load := loadtest.DefaultConfig(math.MaxInt32)
	load.Rate = df.rate
	load.Frame = frame
	load.Progress = func(sent, _ int) { d.sent.Store(int64(sent)) }
	stopLoad := make(chan struct{})
	load.Stop = stopLoad
	var stopOnce sync.Once
	endLoad := func() { stopOnce.Do(func() { close(stopLoad) }) }
	defer endLoad()
	d.say("load: %.0f records/s until the last fault recovered and %s more; schedule %s, %s",
		df.rate, df.tail, scheduleString(df.schedule), d.downs())
	prod, err := d.newClient()
	if err != nil {
		return nil, err
	}
	defer prod.Close()
	type loadResult struct {
		exp *loadtest.Expected
		err error
	}
	loaded := make(chan loadResult, 1)
	loadStart := time.Now()
	d.loadStart = loadStart
	go func() {
		exp, err := loadtest.Generate(ctx, prod, d.cat, load)
		loaded <- loadResult{exp, err}
	}()
	stopProgress := d.progress(ctx, adm)

	res := &drillResult{}
	if err := d.faults(ctx, adm, res); err != nil {
		stopProgress()
		return res, err
	}
	endLoad()
	var lr loadResult
	select {
	case lr = <-loaded:
	case <-ctx.Done():
		stopProgress()
		return res, ctx.Err()
	}
	stopProgress()
	if lr.err != nil {
		return res, lr.err
	}
	exp := lr.exp
	d.say("load done: %d records acknowledged in %s (%d duplicates, %d malformed)", exp.Records, time.Since(loadStart).Round(time.Second), exp.Duplicates, len(exp.Malformed))

	// The joiner first: its output is the recorder's input.
	settle, cancel := context.WithTimeout(ctx, df.recoveryTimeout+5*time.Minute)
	defer cancel()
	if _, err := kafka.WaitCaughtUp(settle, d.newClient, d.joinerGroup(), d.cat.Inputs()); err != nil {
		return res, err
	}
	d.say("joiner caught up; verifying the topics")
	if res.inputs, err = loadtest.VerifyInputs(ctx, d.newClient, d.cat, exp); err != nil {
		return res, err
	}
	return res, d.verify(ctx, settle, adm, conn, exp, res)
}

// faults injects the schedule's faults, each at its offset from the load's
// start (after the previous one recovered), then lets the load run --tail.
func (d *drillRun) faults(ctx context.Context, adm *kadm.Client, res *drillResult) error {
	for _, s := range d.flags.schedule {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(d.loadStart.Add(s.at))):
		}
		fr, err := d.inject(ctx, adm, s)
		if err != nil {
			return err
		}
		res.faults = append(res.faults, fr)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d.flags.tail):
	}
	return nil
}

// verify checks the joiner's output against exp once the joiner caught up,
// stops the learner, waits for the recorder and audits ClickHouse.
func (d *drillRun) verify(ctx, settle context.Context, adm *kadm.Client, conn driver.Conn, exp *loadtest.Expected, res *drillResult) error {
	var err error
	if res.report, err = loadtest.Verify(ctx, d.newClient, d.cat, exp); err != nil {
		return err
	}
	res.outputs = res.report.Verdicts()
	if d.weights != nil {
		// The learner goes on training on its replay without new load: it
		// stops first, so the weights topic the recorder's audit reads no
		// longer grows; its last version is then committed or never will be.
		d.stopSupervising()
		res.selfExits = d.selfExits
		res.unclean = append(res.unclean, d.stopMembers("learner")...)
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := d.weights.CaughtUp(wctx, adm, 250*time.Millisecond)
		cancel()
		if err != nil {
			return err
		}
		c := d.weights.Check()
		res.versions = &c
	}
	recorded := make([]string, 0, len(analytics.EventTables))
	for topic := range analytics.EventTables {
		recorded = append(recorded, d.cat.Name(topic))
	}
	if _, err := kafka.WaitCaughtUp(settle, d.newClient, d.recorderGroup(), recorded); err != nil {
		return err
	}
	d.say("recorder caught up; auditing ClickHouse")
	if res.audit, err = loadtest.AuditRecorder(ctx, d.newClient, d.cat, conn, d.db); err != nil {
		return err
	}
	res.tables = res.audit.Verdicts()
	res.unclean = append(res.unclean, d.stopMembers("joiner", "recorder")...)
	return nil
}

// cleanUp deletes the drill's topics, groups and database (on a cluster of
// its own, the topics go with it).
func (d *drillRun) cleanUp(adm *kadm.Client, conn driver.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if d.cluster == nil {
		_, _ = adm.DeleteGroups(ctx, d.joinerGroup(), d.recorderGroup(), d.learnerGroup(), d.leaseGroup())
		_, _ = adm.DeleteTopics(ctx, d.cat.Names()...)
	}
	if d.ch == nil {
		_ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+d.db)
	}
}

func (d *drillRun) joinerGroup() string   { return d.cat.Prefix + "joiner" }
func (d *drillRun) recorderGroup() string { return d.cat.Prefix + "recorder" }

// progress prints a line every 15 s: records sent, and how far behind each
// group is on the inputs. The returned func stops it.
func (d *drillRun) progress(ctx context.Context, adm *kadm.Client) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(15 * time.Second):
			}
			line := fmt.Sprintf("sent %d records", d.sent.Load())
			if d.flags.real {
				line = "actors wrote: no answer"
				if n, ok := inputRecords(ctx, adm, d.cat.Inputs()); ok {
					line = fmt.Sprintf("actors wrote %d records", n)
				}
			}
			for _, g := range []string{d.joinerGroup(), d.recorderGroup()} {
				if lag, err := loadtest.Offsets(ctx, adm, g, d.cat.Inputs()); err == nil {
					n, _ := lag.Behind()
					line += fmt.Sprintf("; %s behind %d", strings.TrimPrefix(g, d.cat.Prefix), n)
				} else {
					line += fmt.Sprintf("; %s: no answer", strings.TrimPrefix(g, d.cat.Prefix))
				}
			}
			d.say("%s%s", line, d.exited())
		}
	}()
	return func() { cancel(); <-done }
}

// exited names the members that exited on their own and are not back (a
// killed member is restarted before the next line; the learner has its
// supervisor), so a dead member shows at once, not in the final verdict.
func (d *drillRun) exited() string {
	var out []string
	for role, ms := range d.members {
		if role == "learner" {
			continue
		}
		for _, m := range ms {
			if m.byDrill.Load() {
				continue
			}
			m.pmu.Lock()
			p := m.p
			m.pmu.Unlock()
			select {
			case <-p.Done:
				out = append(out, fmt.Sprintf("%s (%s)", m.name, p.LastError()))
			default:
			}
		}
	}
	if len(out) == 0 {
		return ""
	}
	slices.Sort(out)
	return "; EXITED: " + strings.Join(out, ", ")
}

func scheduleString(s []scheduled) string {
	parts := make([]string, len(s))
	for i, f := range s {
		parts[i] = f.name + "@" + f.at.String()
	}
	return strings.Join(parts, ",")
}

// printDrill writes the verdict tables and the faults' recovery times.
func printDrill(w io.Writer, r *drillResult) {
	fmt.Fprintln(w)
	vs := append(slices.Clone(r.inputs), r.outputs...)
	if r.versions != nil {
		vs = append(vs, r.versions.Verdict("weights"))
	}
	loadtest.PrintVerdicts(w, "topic", vs, r.traffic != nil)
	if !r.report.OK() {
		fmt.Fprintf(w, "verifier: %s\n", r.report)
	}
	if r.traffic != nil {
		fmt.Fprintln(w, "(inputs, real actors: distinct events of each topic; lost: acknowledged events missing, a hole in an episode's events of one topic")
		fmt.Fprintln(w, " or any event missing from an episode of a producer not killed; cut: a killed actor's unacknowledged in-flight tail, not lost,")
		fmt.Fprintln(w, " its episodes never trained on (no terminal transition); duplicated: repeated event ids)")
		fmt.Fprintf(w, "(%s)\n", r.traffic)
	} else {
		fmt.Fprintln(w, "(records of each topic: the load's own duplicates and malformed records count as records)")
	}
	if r.versions != nil {
		fmt.Fprintf(w, "(weights: versions 1..%d expected, one record each, each the child of the one before; lost = skipped,\n duplicated = repeated or forked: %s)\n", r.versions.Last, r.versions)
	}
	fmt.Fprintln(w)
	if r.tables != nil {
		loadtest.PrintVerdicts(w, "ClickHouse table", r.tables, false)
		fmt.Fprintln(w, "(distinct events the topic holds committed; its undecodable records are counted in bad_records)")
		for _, t := range r.audit {
			if len(t.Missing) > 0 {
				fmt.Fprintf(w, "%s: missing from %s, for example: %v\n", t.Topic, t.Table, t.Missing)
			}
		}
		fmt.Fprintln(w)
	}
	printFaults(w, r.faults)
	for _, e := range r.selfExits {
		fmt.Fprintln(w, "FAIL: "+e)
	}
	for _, m := range r.unclean {
		fmt.Fprintf(w, "%s did not stop cleanly on SIGTERM\n", m)
	}
}

// stopSignal is what stopMembers sends: the graceful stop every target
// handles.
var stopSignal = syscall.SIGTERM
