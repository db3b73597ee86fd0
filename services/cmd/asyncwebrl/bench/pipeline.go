package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/infra/launch"
	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/config"
	"github.com/asyncwebrl/asyncwebrl/services/internal/kafka"
	"github.com/asyncwebrl/asyncwebrl/services/internal/procstat"
	"github.com/asyncwebrl/asyncwebrl/topics"
)

const benchPipelineUsage = `Usage: asyncwebrl bench pipeline [--duration D] [--warmup W] [flags]
  The full pipeline's share of the machine: make run's job (webenv, actor,
  joiner, learner and recorder on fresh topics, training from random init),
  each target a process of this binary as a deployment runs them, so that
  the CPU each one takes is its own: the actor's with its Chromium
  processes, the learner's with libtorch's threads. After the warm-up
  (browsers started, the learner's first versions), it measures for the
  duration and prints per component its CPU in cores and its share of the
  machine's busy time, beside the broker's and ClickHouse's (their pid
  files in -run-dir, as make up writes them) and what else the machine ran;
  then the pipeline's episodes/s and env steps/s. bench rollout gives the
  rollout alone on the same machine (bench report prints both).
  --duration D   how long to measure (default 2m)
  --warmup W     how long to run before measuring (default 45s)
Flags: the binary's flags (-executors: default 8, make run's; -suite,
-brokers: a real broker,
-run-dir, ...), given to every target; the components' logs go to
<run-dir>/bench/pipeline-<id>/.
`

// makeRunExecutors is make run's EXECUTORS, bench pipeline's default.
const makeRunExecutors = 8

// pipelineTargets are make run's targets, in the order they start.
var pipelineTargets = []string{"webenv", "recorder", "joiner", "learner", "actor"}

// pipelineShare is what bench pipeline measured.
type pipelineShare struct {
	window    time.Duration
	executors int
	// cpu is each component's CPU over the window (its process tree),
	// broker and clickhouse included when their pid files were found.
	cpu               map[string]time.Duration
	machineBusy       time.Duration // the whole machine's busy time, over its cores
	cores             int
	episodes, steps   int
	episodesPerSecond float64
	stepsPerSecond    float64
}

func runBenchPipeline(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	_, err := benchPipeline(ctx, args, stdout, stderr)
	return err
}

func benchPipeline(ctx context.Context, args []string, stdout, stderr io.Writer) (*pipelineShare, error) {
	if cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, benchPipelineUsage)
		return nil, nil
	}
	vals, rest, err := cmdkit.SubFlags(args, []string{"duration", "warmup"}, nil)
	if err != nil {
		return nil, cmdkit.Usage(err)
	}
	window, warmup := 2*time.Minute, 45*time.Second
	for name, d := range map[string]*time.Duration{"duration": &window, "warmup": &warmup} {
		if v, ok := vals[name]; ok {
			if *d, err = time.ParseDuration(v); err != nil || *d < 0 || name == "duration" && *d == 0 {
				return nil, cmdkit.Usage(fmt.Errorf("invalid --%s %q (want a duration, e.g. 2m)", name, v))
			}
		}
	}
	cfg, rest, err := pipelineConfig(rest, stdout, "bench pipeline")
	if err != nil {
		return nil, err
	}
	run, err := startPipeline(ctx, cfg, rest, "pipeline")
	if err != nil {
		return nil, err
	}
	defer run.stop(cfg.StopTimeout)
	f, cat := run.f, run.cat
	fmt.Fprintf(stdout, "bench pipeline: %d executors, suite %s, latency %s, %d cores, broker %s; warm-up %s, then %s measured; logs in %s\n",
		cfg.Actor.Executors, cfg.Suite, cfg.Webenv.LatencyProfile, runtime.NumCPU(), strings.Join(cfg.Brokers, ","), warmup, window, run.dir)

	count := &episodeCounter{}
	cctx, cancelCount := context.WithCancel(ctx)
	defer cancelCount()
	countErr := make(chan error, 1)
	go func() { countErr <- count.follow(cctx, f, cat) }()

	wait := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		tick := time.NewTicker(30 * time.Second)
		defer tick.Stop()
		start := time.Now()
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case err := <-countErr:
				return fmt.Errorf("unable to count episodes: %w", err)
			case <-t.C:
				return nil
			case <-tick.C:
				e, s := count.now()
				fmt.Fprintf(stdout, "  %s: %d episodes, %d steps\n", time.Since(start).Round(time.Second), e, s)
			}
			if err := run.exited(); err != nil {
				return err
			}
		}
	}
	if err := wait(warmup); err != nil {
		return nil, err
	}
	pids := run.pids(cfg.RunDir)
	cpu0 := map[string]time.Duration{}
	for name, pid := range pids {
		cpu0[name] = procstat.TreeCPU(pid)
	}
	m0, t0 := procstat.Machine(), time.Now()
	e0, s0 := count.now()
	if err := wait(window); err != nil {
		return nil, err
	}
	e1, s1 := count.now()
	m1, wall := procstat.Machine(), time.Since(t0)
	res := &pipelineShare{window: wall, executors: cfg.Actor.Executors, cpu: map[string]time.Duration{}, cores: runtime.NumCPU(),
		episodes: e1 - e0, steps: s1 - s0}
	for name, pid := range pids {
		res.cpu[name] = procstat.TreeCPU(pid) - cpu0[name]
	}
	if m1.Total > m0.Total {
		// Ticks over every core: the busy share of the window's core-time.
		res.machineBusy = time.Duration(float64(wall) * float64(res.cores) * procstat.Util(m0, m1))
	}
	res.episodesPerSecond = float64(res.episodes) / wall.Seconds()
	res.stepsPerSecond = float64(res.steps) / wall.Seconds()
	printPipelineShare(stdout, res)
	return res, nil
}

// pipelineConfig parses the binary's flags rest for a job of processes
// (bench pipeline, the soak, named by what): make run's executors unless
// -executors or its variable says otherwise, and a real broker. It returns
// the flags the targets get.
func pipelineConfig(rest []string, stdout io.Writer, what string) (*config.Config, []string, error) {
	if !slices.ContainsFunc(rest, func(a string) bool {
		return strings.HasPrefix(strings.TrimLeft(a, "-"), "executors")
	}) && os.Getenv("ASYNCWEBRL_EXECUTORS") == "" {
		rest = append([]string{"-executors=" + strconv.Itoa(makeRunExecutors)}, rest...)
	}
	cfg, err := cmdkit.Parse(rest, stdout)
	if err != nil {
		return nil, nil, err
	}
	if slices.Contains(cfg.Brokers, "embedded") {
		return nil, nil, cmdkit.Usage(fmt.Errorf("%s runs each target as a process of its own: give a real broker (-brokers), not embedded", what))
	}
	return cfg, rest, nil
}

// pipelineRun is make run's job started by bench pipeline or the soak:
// each target a process of this binary on fresh topics.
type pipelineRun struct {
	f     *kafka.Factory
	cat   *topics.Catalog
	dir   string // the targets' logs
	procs map[string]*launch.Process
	// admin: each target's admin address (its /metrics).
	admin   map[string]string
	cleanup []func()
}

// startPipeline starts the targets (pipelineTargets, in order) with the
// binary's flags rest on topics named for kind and a random id.
func startPipeline(ctx context.Context, cfg *config.Config, rest []string, kind string) (_ *pipelineRun, err error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("unable to find this binary: %w", err)
	}
	f, closeKafka, err := benchKafka(ctx, cfg)
	if err != nil {
		return nil, err
	}
	r := &pipelineRun{f: f, procs: map[string]*launch.Process{}, admin: map[string]string{}, cleanup: []func(){closeKafka}}
	defer func() {
		if err != nil {
			r.stop(cfg.StopTimeout)
		}
	}()
	id := cmdkit.RandomID()
	prefix := "bench_" + kind + "_" + id + "."
	r.cat = cmdkit.Catalog(cfg, prefix)
	if err := cmdkit.ApplyTopics(ctx, f, r.cat, quiet); err != nil {
		return nil, err
	}
	r.cleanup = append(r.cleanup, func() { deleteTopics(f, r.cat) })
	r.dir = filepath.Join(cfg.RunDir, "bench", kind+"-"+id)
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return nil, fmt.Errorf("unable to create %s: %w", r.dir, err)
	}
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	webenv := "127.0.0.1:" + strconv.Itoa(port)
	for _, t := range pipelineTargets {
		ap, err := freeLoopbackPort()
		if err != nil {
			return nil, err
		}
		r.admin[t] = "127.0.0.1:" + strconv.Itoa(ap)
		a := append(slices.Clone(rest), "-target="+t, "-topic-prefix="+prefix, "-apply-topics=false",
			"-admin-addr="+r.admin[t], "-dashboard-addr=127.0.0.1:0", "-webenv-addr="+webenv, "-webenv-url=http://"+webenv,
			"-instance-id=bench-"+kind+"-"+id+"-"+t)
		p, err := launch.StartProcess(bin, r.dir, t, nil, a...)
		if err != nil {
			return nil, err
		}
		r.procs[t] = p
	}
	return r, nil
}

// exited returns an error naming the first target that exited.
func (r *pipelineRun) exited() error {
	for _, name := range pipelineTargets {
		p := r.procs[name]
		if p == nil {
			continue
		}
		select {
		case <-p.Done:
			return fmt.Errorf("the %s exited early (%v); its log: %s", name, p.Err, p.Log)
		default:
		}
	}
	return nil
}

// pids are the targets' pids and, where their pid files are found, the
// broker's and ClickHouse's.
func (r *pipelineRun) pids(runDir string) map[string]int {
	pids := map[string]int{}
	for name, p := range r.procs {
		pids[name] = p.Cmd.Process.Pid
	}
	for name, pidFile := range infraPidFiles(runDir) {
		if pid := readPid(pidFile); pid > 0 {
			pids[name] = pid
		}
	}
	return pids
}

// stop stops the targets in reverse order (the actor stops producing
// first), then deletes the topics and closes the client.
func (r *pipelineRun) stop(timeout time.Duration) {
	for i := len(pipelineTargets) - 1; i >= 0; i-- {
		if p := r.procs[pipelineTargets[i]]; p != nil {
			stopProcess(p, timeout)
		}
	}
	r.procs = map[string]*launch.Process{}
	for i := len(r.cleanup) - 1; i >= 0; i-- {
		r.cleanup[i]()
	}
	r.cleanup = nil
}

// infraPidFiles are the pid files make up's broker nodes and ClickHouse
// write under the run dir (infra/kafka.sh, infra/clickhouse.sh): one node
// in kafka/, several in kafka/node<i>/.
func infraPidFiles(runDir string) map[string]string {
	out := map[string]string{"clickhouse": filepath.Join(runDir, "clickhouse", "clickhouse.pid")}
	nodes, _ := filepath.Glob(filepath.Join(runDir, "kafka", "node*", "kafka.pid"))
	if len(nodes) == 0 {
		out["broker"] = filepath.Join(runDir, "kafka", "kafka.pid")
	}
	for _, n := range nodes {
		out["broker "+strings.TrimPrefix(filepath.Base(filepath.Dir(n)), "node")] = n
	}
	return out
}

// readPid reads a pid file; 0 when it is missing or its process is gone.
func readPid(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || procstat.Stat(pid) == nil {
		return 0
	}
	return pid
}

// stopProcess stops p with SIGTERM and waits for it for its stop timeout
// and a margin, then kills it.
func stopProcess(p *launch.Process, timeout time.Duration) {
	_ = p.Cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.Done:
	case <-time.After(timeout + 10*time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.Done
	}
}

// shareRow is one line of the components' table.
type shareRow struct {
	name  string
	cores float64 // CPU over the window, in cores
	share string  // of the machine's busy time; "-" when unmeasured
}

// rows are the components' CPU, largest first, then the rest of the
// machine (its busy time less theirs) when the machine was measured.
func (r *pipelineShare) rows() []shareRow {
	names := make([]string, 0, len(r.cpu))
	var ours time.Duration
	for n, d := range r.cpu {
		names = append(names, n)
		ours += d
	}
	slices.SortFunc(names, func(a, b string) int { return int(r.cpu[b] - r.cpu[a]) })
	row := func(name string, d time.Duration) shareRow {
		sr := shareRow{name: name, cores: d.Seconds() / r.window.Seconds(), share: "-"}
		if r.machineBusy > 0 {
			sr.share = fmt.Sprintf("%.0f%%", 100*d.Seconds()/r.machineBusy.Seconds())
		}
		return sr
	}
	var out []shareRow
	for _, n := range names {
		out = append(out, row(n, r.cpu[n]))
	}
	if r.machineBusy > 0 {
		out = append(out, row("the rest of the machine", max(0, r.machineBusy-ours)))
	}
	return out
}

// printPipelineShare prints the components' table, the machine's busy
// time and the pipeline's throughput.
func printPipelineShare(w io.Writer, r *pipelineShare) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "component\tcores\tshare of the machine's busy time\t\n")
	for _, sr := range r.rows() {
		fmt.Fprintf(tw, "%s\t%.2f\t%s\t\n", sr.name, sr.cores, sr.share)
	}
	_ = tw.Flush()
	if r.machineBusy > 0 {
		fmt.Fprintf(w, "machine busy: %.2f of %d cores (%.0f%% of its time)\n", r.machineBusy.Seconds()/r.window.Seconds(), r.cores,
			100*r.machineBusy.Seconds()/r.window.Seconds()/float64(r.cores))
	}
	fmt.Fprintf(w, "pipeline: %d episodes, %d env steps in %s: %.2f episodes/s, %.1f steps/s\n",
		r.episodes, r.steps, r.window.Round(time.Second), r.episodesPerSecond, r.stepsPerSecond)
}

// episodeCounter counts the episodes the pipeline finishes and their
// steps, from the episodes topic.
type episodeCounter struct {
	mu              sync.Mutex
	episodes, steps int
}

func (c *episodeCounter) now() (int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.episodes, c.steps
}

func (c *episodeCounter) follow(ctx context.Context, f *kafka.Factory, cat *topics.Catalog) error {
	cl, err := runReader(f, "bench-pipeline-count", cat.Name(topics.Episodes))
	if err != nil {
		return err
	}
	defer cl.Close()
	l := &kafka.Loop{Name: "bench pipeline count", Poller: cl,
		Handle: func(_ context.Context, fs kgo.Fetches) error {
			fs.EachRecord(func(r *kgo.Record) {
				ep, err := eventspb.DecodeEpisode(r.Value)
				if err != nil || ep.GetAborted() {
					return
				}
				c.mu.Lock()
				c.episodes++
				c.steps += int(ep.GetLength())
				c.mu.Unlock()
			})
			return nil
		}}
	err = l.Run(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return err
}
