package actor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/services/internal/backoff"
	"github.com/asyncwebrl/asyncwebrl/services/webenv/env"
)

// pool is the actor's Chromium processes. Executors are spread over its
// slots round robin; each slot holds one browser and a generation that
// grows with every restart, so that the executors of a crashed browser
// restart it once between them.
type pool struct {
	opts      []env.BrowserOption
	log       *slog.Logger
	slots     []*slot
	onRestart func()
	// sandboxOff says once why the browsers run without Chromium's sandbox.
	sandboxOff sync.Once
	// nice, when not 0, is imposed on every thread of every browser at
	// start and at each health check: Chromium raises its compositor and
	// IO threads to nice -8 when it may, which starves the learner and
	// joiner sharing the machine. The browsers then get what CPU is left.
	nice int
}

type slot struct {
	idx int

	mu       sync.Mutex // held across a restart
	b        *env.Browser
	gen      uint64
	pgid     int
	dir      string
	restarts int
	closed   bool
}

// BrowserInfo describes one browser of the pool.
type BrowserInfo struct {
	Index      int
	PID        int
	DataDir    string
	Generation uint64
	Restarts   int
}

func newPool(ctx context.Context, n int, opts []env.BrowserOption, log *slog.Logger, onRestart func()) (*pool, error) {
	p := &pool{opts: opts, log: log, onRestart: onRestart}
	p.slots = make([]*slot, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range p.slots {
		p.slots[i] = &slot{idx: i}
		wg.Add(1)
		go func(s *slot) {
			defer wg.Done()
			errs[s.idx] = p.launch(ctx, s)
		}(p.slots[i])
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}

// launch starts a browser into s (s.mu held or s not shared yet).
func (p *pool) launch(ctx context.Context, s *slot) error {
	opts := append(append([]env.BrowserOption(nil), p.opts...), env.WithCmdModifier(ownProcessGroup))
	b, err := env.LaunchBrowser(ctx, opts...)
	if err != nil {
		return fmt.Errorf("unable to launch browser %d: %w", s.idx, err)
	}
	s.b, s.dir, s.pgid = b, b.DataDir(), 0
	if proc := b.Process(); proc != nil {
		s.pgid = proc.Pid // Setpgid: the main process leads its group
	}
	s.gen++
	setGroupNice(s.pgid, p.nice)
	iso := b.Isolation()
	p.log.Info("browser started", "browser", s.idx, "pid", s.pgid, "generation", s.gen, "uid", iso.UID, "sandbox", iso.Sandbox)
	if !iso.Sandbox {
		p.sandboxOff.Do(func() {
			left := "runs as this process's user"
			if iso.UID >= 0 {
				left = fmt.Sprintf("runs as uid %d", iso.UID)
			}
			p.log.Warn("Chromium's sandbox is off: "+iso.Why+"; the browser "+left+", behind the origin allowlist", "uid", iso.UID)
		})
	}
	return nil
}

// get returns slot i's browser and its generation.
func (p *pool) get(i int) (*env.Browser, uint64, error) {
	s := p.slots[i%len(p.slots)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.b == nil {
		return nil, 0, errors.New("browser pool closed")
	}
	return s.b, s.gen, nil
}

// alive reports whether the browser's connection is up and it answers a
// DevTools call within timeout.
func alive(ctx context.Context, b *env.Browser, timeout time.Duration) bool {
	select {
	case <-b.Lost():
		return false
	default:
	}
	c, cancel := context.WithTimeout(b.Context(), timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	v, err := chromedp.CallBrowser(c, browser.GetVersion, cdp.Empty{})
	return err == nil && v.Product != ""
}

// restart replaces slot i's browser if it is still generation gen (the
// executors that saw it fail race here; the first restarts, the others find
// a newer generation). It retries the launch until ctx ends.
func (p *pool) restart(ctx context.Context, i int, gen uint64, why string) error {
	s := p.slots[i%len(p.slots)]
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("browser pool closed")
	}
	if s.gen != gen {
		return nil
	}
	p.log.Warn("restarting browser", "browser", s.idx, "pid", s.pgid, "generation", s.gen, "why", why)
	p.closeSlot(s)
	bo := backoff.Backoff{Min: 200 * time.Millisecond, Max: 5 * time.Second}
	for {
		err := p.launch(ctx, s)
		if err == nil {
			s.restarts++
			if p.onRestart != nil {
				p.onRestart()
			}
			return nil
		}
		p.log.Error("unable to restart browser", "browser", s.idx, "err", err)
		if err := bo.Wait(ctx); err != nil {
			return fmt.Errorf("unable to restart browser %d: %w", s.idx, err)
		}
	}
}

// closeSlot stops s's browser and makes sure none of its processes is left
// (s.mu held).
func (p *pool) closeSlot(s *slot) {
	if s.b == nil {
		return
	}
	b, pgid, dir := s.b, s.pgid, s.dir
	s.b = nil
	done := make(chan struct{})
	go func() {
		_ = b.Close() // reaps the main process and removes the data dir
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		p.log.Warn("browser did not close in time; killing it", "browser", s.idx, "pid", pgid)
	}
	killGroup(pgid)
	killRest(pgid, dir)
	// A helper that outlived the main process can write into the data dir
	// after Close removed it: remove what it left, now that none is left.
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// close stops every browser.
func (p *pool) close() {
	var wg sync.WaitGroup
	for _, s := range p.slots {
		if s == nil {
			continue
		}
		wg.Add(1)
		go func(s *slot) {
			defer wg.Done()
			s.mu.Lock()
			defer s.mu.Unlock()
			s.closed = true
			p.closeSlot(s)
		}(s)
	}
	wg.Wait()
}

// info describes the browsers.
func (p *pool) info() []BrowserInfo {
	out := make([]BrowserInfo, 0, len(p.slots))
	for _, s := range p.slots {
		s.mu.Lock()
		out = append(out, BrowserInfo{Index: s.idx, PID: s.pgid, DataDir: s.dir, Generation: s.gen, Restarts: s.restarts})
		s.mu.Unlock()
	}
	return out
}

// pids returns every live process of every browser (for CPU accounting).
func (p *pool) pids() []int {
	var pids []int
	for _, bi := range p.info() {
		if bi.DataDir != "" || bi.PID > 1 {
			pids = append(pids, processesOf(bi.PID, bi.DataDir)...)
		}
	}
	return pids
}

// watch supervises every browser until ctx ends: a browser whose
// connection drops is restarted at once, and one that does not answer a
// health check within interval is restarted too. Executors whose tab fails
// ask for the same restart; the generation makes it happen once.
func (p *pool) watch(ctx context.Context, interval time.Duration) {
	var wg sync.WaitGroup
	for i := range p.slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.watchSlot(ctx, i, interval)
		}()
	}
	wg.Wait()
}

func (p *pool) watchSlot(ctx context.Context, i int, interval time.Duration) {
	for {
		b, gen, err := p.get(i)
		if err != nil {
			return
		}
		why := ""
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-b.Lost():
			t.Stop()
			why = "connection to the browser lost"
		case <-t.C:
			if alive(ctx, b, interval) {
				p.renice(i)
				continue
			}
			why = "health check failed"
		}
		if ctx.Err() != nil {
			return
		}
		if err := p.restart(ctx, i, gen, why); err != nil && ctx.Err() == nil {
			p.log.Error("unable to restart a browser", "browser", i, "err", err)
		}
	}
}

// renice re-imposes the pool's nice on browser i (threads it started since
// may have raised their own priority).
func (p *pool) renice(i int) {
	s := p.slots[i]
	s.mu.Lock()
	pgid, nice := s.pgid, p.nice
	s.mu.Unlock()
	setGroupNice(pgid, nice)
}

// setNice imposes nice on every browser now and on every restart.
func (p *pool) setNice(nice int) {
	p.nice = nice
	for i := range p.slots {
		p.renice(i)
	}
}
