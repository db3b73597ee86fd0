package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/asyncwebrl/asyncwebrl/analytics"
	"github.com/asyncwebrl/asyncwebrl/services/cmd/asyncwebrl/internal/cmdkit"
	"github.com/asyncwebrl/asyncwebrl/services/internal/procstat"
)

const benchSoakUsage = `Usage: asyncwebrl soak [--duration D] [--every E] [--warmup W] [--max-growth P] [flags]
       asyncwebrl bench soak ...
  A long run of make run's job, each target a process (as bench pipeline
  starts them), sampled every E: per target (webenv, recorder, joiner,
  learner, actor; the broker and ClickHouse when their pid files are in
  -run-dir) its process tree's resident memory, threads, open files and
  processes, the Chromium processes under the actor, each target's
  goroutines and C heap in use and free (its /metrics), and ClickHouse's
  active parts. After the warm-up, each series' growth per hour is fitted
  (least squares) and judged against its bound: P percent of its mean an
  hour, or a floor (32 MiB of memory, 20 goroutines, 16 threads or open
  files, 2 processes, 100 parts an hour), whichever is larger. Prints each
  series' value after the warm-up and at the end, its slope per hour and
  its verdict, and exits non-zero when one grew past its bound or a target
  exited. A slope over less than 30 minutes after the warm-up is printed,
  not judged: fitted over minutes, one merge or collection extrapolates to
  hundreds of MiB an hour. The learner's replay buffer grows to its
  capacity (4096 samples, 58 KB each packed with the features backend) and
  can take hours to fill: the learner's memory is judged in two parts
  without it, from its /metrics: its resident memory outside the Go
  runtime (libtorch's), and the Go heap the last collection marked live,
  less the replay; its rss and the replay's samples are printed beside.
  Why: no run had lasted more than an hour; a leak that doubles in a day
  does not show in one.
  --duration D   how long to run (default 2h)
  --every E      the sampling interval (default 1m)
  --warmup W     samples before W are printed, not judged (default 5m: the
                 browsers start, the replay fills, ClickHouse merges its
                 first parts)
  --max-growth P the bound's share of a series' mean, in percent an hour
                 (default 10)
Flags: the binary's flags (-executors: default 8, make run's; -suite,
-brokers: a real broker, -clickhouse-*, -run-dir, ...), given to every
target; the targets' logs go to <run-dir>/bench/soak-<id>/.
`

// soakSeries is one sampled quantity of one component.
type soakSeries struct {
	component, metric string
	floor             float64 // the bound's floor, per hour
	unit              string  // "MiB" or "" (a count)
	at                []float64
	v                 []float64 // at[i] hours after the warm-up ended (negative: before)
	// note, when set, is printed as the verdict, and the series is never
	// failed: its growth has a bounded cause judged apart (the learner's
	// replay filling to its capacity).
	note string
}

// soakVerdict is a series judged.
type soakVerdict struct {
	series           *soakSeries
	first, last      float64 // the first sample after the warm-up, the last
	slope, bound     float64 // per hour
	grew, undersized bool    // above the bound; too few samples to fit
	short            bool    // judged over less than minJudgedSpan: printed, never failed
}

// minJudgedSpan is the least time after the warm-up a slope is judged
// over: fitted over minutes, a merge or a garbage collection extrapolates
// to hundreds of MiB an hour (a 3-minute check here had 9 series "grow").
const minJudgedSpan = 30 * time.Minute

// fitSlope is the least-squares slope of v against at.
func fitSlope(at, v []float64) (float64, bool) {
	n := float64(len(at))
	if len(at) < 3 {
		return 0, false
	}
	var sx, sy, sxx, sxy float64
	for i := range at {
		sx, sy, sxx, sxy = sx+at[i], sy+v[i], sxx+at[i]*at[i], sxy+at[i]*v[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0, false
	}
	return (n*sxy - sx*sy) / d, true
}

// judge fits the series' samples after the warm-up (at >= 0) and compares
// the slope with max(floor, pct% of their mean) an hour.
func (s *soakSeries) judge(pct float64) soakVerdict {
	var at, v []float64
	for i := range s.at {
		if s.at[i] >= 0 {
			at, v = append(at, s.at[i]), append(v, s.v[i])
		}
	}
	r := soakVerdict{series: s}
	if len(v) == 0 {
		r.undersized = true
		return r
	}
	r.first, r.last = v[0], v[len(v)-1]
	slope, ok := fitSlope(at, v)
	if !ok {
		r.undersized = true
		return r
	}
	mean := 0.0
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	r.slope, r.bound = slope, math.Max(s.floor, pct/100*math.Abs(mean))
	r.short = at[len(at)-1]-at[0] < minJudgedSpan.Hours()
	r.grew = slope > r.bound && !r.short
	return r
}

// soakSampler samples every component of a pipeline run.
type soakSampler struct {
	pids   map[string]int
	admin  map[string]string
	series map[string]*soakSeries // component/metric
	order  []string
	client *http.Client
	parts  func(context.Context) (float64, error) // nil: not sampled
}

func (s *soakSampler) add(component, metric, unit string, floor, at, v float64) {
	k := component + "/" + metric
	sr := s.series[k]
	if sr == nil {
		sr = &soakSeries{component: component, metric: metric, unit: unit, floor: floor}
		s.series[k] = sr
		s.order = append(s.order, k)
	}
	sr.at, sr.v = append(sr.at, at), append(sr.v, v)
}

// sample takes one sample of everything at hours (after the warm-up).
func (s *soakSampler) sample(ctx context.Context, hours float64) []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(s.pids)) {
		u := procstat.TreeUsage(s.pids[name], "chrom")
		if u.Processes == 0 {
			errs = append(errs, fmt.Errorf("%s (pid %d) is gone", name, s.pids[name]))
			continue
		}
		rss := float64(u.RSS) / (1 << 20)
		s.add(name, "rss", "MiB", 32, hours, rss)
		s.add(name, "threads", "", 16, hours, float64(u.Threads))
		s.add(name, "open files", "", 16, hours, float64(u.FDs))
		s.add(name, "processes", "", 2, hours, float64(u.Processes))
		if name == "actor" {
			s.add(name, "chromium processes", "", 2, hours, float64(u.Named))
		}
		addr, ok := s.admin[name]
		if !ok {
			continue
		}
		m, err := targetMetrics(ctx, s.client, addr)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		s.add(name, "goroutines", "", 20, hours, m[goroutinesMetric])
		if v, ok := m[cHeapInUseMetric]; ok {
			// Resident memory outside the Go runtime grows from a C leak
			// (in use) or from malloc's heaps fragmenting (free): apart.
			s.add(name, "C heap in use", "MiB", 32, hours, v/(1<<20))
			s.add(name, "C heap free", "MiB", 32, hours, m[cHeapFreeMetric]/(1<<20))
		}
		if b, ok := m[replayBytesMetric]; ok {
			// The learner's replay grows to its capacity (samples are
			// evicted by use, and a loaded learner falls behind): bounded,
			// not a leak, and at 58 KB a sample (packed) it can take hours to
			// fill. Its memory is judged in two parts without the replay:
			// the resident memory outside the Go runtime (libtorch, cgo:
			// rss less what the runtime holds from the OS), and the Go heap
			// the last collection marked live, less the replay. Not the
			// heap in use: it swings between the live heap and twice it
			// (GOGC=100) with the moment sampled, and the swing grows with
			// the replay; nor the runtime's metadata, which grows with the
			// heap (a test on 12-06: outside the runtime flat at 228-235
			// MiB once its pool stopped growing, heap in use 281 to 599).
			outside := rss - (m[goSysMetric]-m[heapReleasedMetric])/(1<<20)
			s.add(name, "resident outside the Go runtime", "MiB", 32, hours, outside)
			s.add(name, "Go live heap without the replay", "MiB", 32, hours, (m[heapLiveMetric]-b)/(1<<20))
			s.add(name, "replay samples", "", 0, hours, m[replaySamplesMetric])
			capacity := m[replayCapacityMetric]
			s.series[name+"/rss"].note = fmt.Sprintf("not judged: holds the replay (%.0f MiB at the end)", b/(1<<20))
			s.series[name+"/replay samples"].note = fmt.Sprintf("bounded: capacity %.0f", capacity)
		}
	}
	if s.parts != nil {
		if n, err := s.parts(ctx); err != nil {
			errs = append(errs, fmt.Errorf("clickhouse parts: %w", err))
		} else {
			s.add("clickhouse", "active parts", "", 100, hours, n)
		}
	}
	return errs
}

// The samples the soak reads from a target's /metrics.
const (
	goroutinesMetric     = "go_goroutines"
	replayBytesMetric    = "asyncwebrl_learner_replay_bytes"
	replaySamplesMetric  = "asyncwebrl_learner_replay_samples"
	replayCapacityMetric = "asyncwebrl_learner_replay_capacity"
	heapLiveMetric       = "go_gc_heap_live_bytes"
	goSysMetric          = "go_memstats_sys_bytes"
	heapReleasedMetric   = "go_memstats_heap_released_bytes"
	cHeapInUseMetric     = "asyncwebrl_c_heap_in_use_bytes"
	cHeapFreeMetric      = "asyncwebrl_c_heap_free_bytes"
)

// targetMetrics reads the soak's samples from a target's /metrics.
func targetMetrics(ctx context.Context, c *http.Client, addr string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("unable to read its metrics: %w", err)
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

// parseMetrics finds the soak's samples (unlabelled) in a Prometheus text
// exposition; go_goroutines must be there.
func parseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		switch name {
		case goroutinesMetric, replayBytesMetric, replaySamplesMetric, replayCapacityMetric, heapLiveMetric, goSysMetric, heapReleasedMetric,
			cHeapInUseMetric, cHeapFreeMetric:
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err != nil {
				return nil, fmt.Errorf("unable to read %s %q: %w", name, rest, err)
			}
			out[name] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("unable to read its metrics: %w", err)
	}
	if _, ok := out[goroutinesMetric]; !ok {
		return nil, errors.New("its metrics have no go_goroutines")
	}
	return out, nil
}

// printSoak prints the verdict table and returns the series that grew.
func printSoak(w io.Writer, vs []soakVerdict, pct float64) []string {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "component\tmetric\tafter warm-up\tat the end\tslope per hour\tbound per hour\tverdict\t\n")
	var grew []string
	for _, v := range vs {
		s := v.series
		unit := ""
		if s.unit != "" {
			unit = " " + s.unit
		}
		verdict := "ok"
		switch {
		case s.note != "":
			verdict = s.note
		case v.undersized:
			verdict = "too few samples"
		case v.grew:
			verdict = "GREW"
			grew = append(grew, s.component+" "+s.metric)
		case v.short && v.slope > v.bound:
			verdict = "above, too short to judge"
		case v.short:
			verdict = "ok, too short to judge"
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f%s\t%.0f%s\t%+.1f%s\t%.1f%s\t%s\t\n", s.component, s.metric, v.first, unit, v.last, unit, v.slope, unit, v.bound, unit, verdict)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "bound: the larger of %.0f%% of the series' mean an hour and its floor; judged over at least %s after the warm-up\n", pct, minJudgedSpan)
	return grew
}

func runSoak(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if cmdkit.HelpAsked(args) {
		fmt.Fprint(stdout, benchSoakUsage)
		return nil
	}
	vals, rest, err := cmdkit.SubFlags(args, []string{"duration", "every", "warmup", "max-growth"}, nil)
	if err != nil {
		return cmdkit.Usage(err)
	}
	dur, every, warmup, pct := 2*time.Hour, time.Minute, 5*time.Minute, 10.0
	for name, d := range map[string]*time.Duration{"duration": &dur, "every": &every, "warmup": &warmup} {
		if v, ok := vals[name]; ok {
			if *d, err = time.ParseDuration(v); err != nil || *d < 0 || name != "warmup" && *d == 0 {
				return cmdkit.Usage(fmt.Errorf("invalid --%s %q (want a duration, e.g. 2h)", name, v))
			}
		}
	}
	if v, ok := vals["max-growth"]; ok {
		if pct, err = strconv.ParseFloat(v, 64); err != nil || pct <= 0 {
			return cmdkit.Usage(fmt.Errorf("invalid --max-growth %q (want a percentage above 0, e.g. 10)", v))
		}
	}
	if warmup+3*every > dur {
		return cmdkit.Usage(fmt.Errorf("--duration %s leaves fewer than 3 samples after the %s warm-up at --every %s", dur, warmup, every))
	}
	cfg, rest, err := pipelineConfig(rest, stdout, "the soak")
	if err != nil {
		return err
	}
	run, err := startPipeline(ctx, cfg, rest, "soak")
	if err != nil {
		return err
	}
	defer run.stop(cfg.StopTimeout)
	fmt.Fprintf(stdout, "soak: %s of make run's job, %d executors, suite %s, %d cores, broker %s; a sample every %s, judged after %s; logs in %s\n",
		dur, cfg.Actor.Executors, cfg.Suite, runtime.NumCPU(), strings.Join(cfg.Brokers, ","), every, warmup, run.dir)

	sm := &soakSampler{admin: run.admin, series: map[string]*soakSeries{}, client: &http.Client{Timeout: 10 * time.Second}}
	if conn, err := analytics.Open(ctx, cmdkit.ClickHouse(cfg)); err != nil {
		fmt.Fprintf(stdout, "soak: ClickHouse parts not sampled: %v\n", err)
	} else {
		defer conn.Close()
		sm.parts = func(ctx context.Context) (float64, error) {
			var n uint64
			if err := conn.QueryRow(ctx, "SELECT count() FROM system.parts WHERE active AND database = currentDatabase()").Scan(&n); err != nil {
				return 0, err
			}
			return float64(n), nil
		}
	}
	count := &episodeCounter{}
	cctx, cancelCount := context.WithCancel(ctx)
	defer cancelCount()
	countErr := make(chan error, 1)
	go func() { countErr <- count.follow(cctx, run.f, run.cat) }()

	start := time.Now()
	tick := time.NewTicker(every)
	defer tick.Stop()
	end := time.NewTimer(dur)
	defer end.Stop()
	var runErr error
loop:
	for {
		select {
		case <-ctx.Done():
			runErr = ctx.Err()
			break loop
		case err := <-countErr:
			runErr = fmt.Errorf("unable to count episodes: %w", err)
			break loop
		case <-end.C:
			break loop
		case <-tick.C:
			if err := run.exited(); err != nil {
				runErr = err
				break loop
			}
			if sm.pids == nil {
				// The broker's and ClickHouse's pid files are read once:
				// a restart of either is a fault, not part of the soak.
				sm.pids = run.pids(cfg.RunDir)
			}
			el := time.Since(start)
			errs := sm.sample(ctx, (el - warmup).Hours())
			e, st := count.now()
			fmt.Fprintf(stdout, "  %s: %d episodes, %d steps%s\n", el.Round(time.Second), e, st, soakLine(sm))
			for _, err := range errs {
				fmt.Fprintf(stdout, "  sample: %v\n", err)
			}
		}
	}
	e, st := count.now()
	fmt.Fprintf(stdout, "soak: %s, %d episodes (%.2f/s), %d steps\n", time.Since(start).Round(time.Second), e, float64(e)/time.Since(start).Seconds(), st)
	var vs []soakVerdict
	for _, k := range sm.order {
		vs = append(vs, sm.series[k].judge(pct))
	}
	grew := printSoak(stdout, vs, pct)
	switch {
	case runErr != nil:
		return fmt.Errorf("unable to finish the soak: %w", runErr)
	case len(grew) > 0:
		return fmt.Errorf("the soak found growth past its bound: %s", strings.Join(grew, ", "))
	}
	return nil
}

// soakLine is the progress line's latest values: the actor's memory and
// Chromium processes and the learner's memory.
func soakLine(sm *soakSampler) string {
	var b strings.Builder
	for _, k := range []string{"actor/rss", "actor/chromium processes", "learner/rss", "clickhouse/active parts"} {
		if s := sm.series[k]; s != nil && len(s.v) > 0 {
			fmt.Fprintf(&b, ", %s %.0f", strings.Replace(k, "/", " ", 1), s.v[len(s.v)-1])
			if s.unit != "" {
				b.WriteString(" " + s.unit)
			}
		}
	}
	return b.String()
}
