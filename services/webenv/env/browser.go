package env

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"github.com/chromedp/chromedp"
)

// DefaultChromium is Debian's Chromium binary (never /usr/bin/chromium,
// which is a wrapper script).
const DefaultChromium = "/usr/lib/chromium/chromium"

// HeadlessShell is Debian's chromium-headless-shell binary: the same
// Blink and V8 as DefaultChromium without the browser UI layer ("old"
// headless). Measured here on 2 cores against DefaultChromium: a screenshot
// 7.9 ms of Chromium CPU instead of 10.4, a navigation 71 ms instead of
// 121, an actor step about 30% cheaper (ARCHITECTURE.md, change log).
const HeadlessShell = "/usr/lib/chromium/chromium-headless-shell"

// DefaultExecPath is the browser LaunchBrowser starts unless told
// otherwise: HeadlessShell when it is installed, else DefaultChromium.
func DefaultExecPath() string {
	if fi, err := os.Stat(HeadlessShell); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
		return HeadlessShell
	}
	return DefaultChromium
}

// BrowserOption configures LaunchBrowser.
type BrowserOption func(*browserConfig)

type browserConfig struct {
	execPath  string
	extra     []chromedp.ExecAllocatorOption
	sandbox   string            // WithSandbox
	modifiers []func(*exec.Cmd) // WithCmdModifier
}

// WithExecPath sets the Chromium binary (default DefaultExecPath(); an
// empty path keeps the default).
func WithExecPath(p string) BrowserOption {
	return func(c *browserConfig) {
		if p != "" {
			c.execPath = p
		}
	}
}

// WithBrowserFlag adds a command-line flag (default: only the launcher's
// flags).
func WithBrowserFlag(name string, value any) BrowserOption {
	return func(c *browserConfig) { c.extra = append(c.extra, chromedp.Flag(name, value)) }
}

// Browser is one headless Chromium process with a fresh user-data dir that
// Close removes. Tabs (one per Env) share the process.
type Browser struct {
	ctx       context.Context // the browser's root chromedp context
	cancel    context.CancelFunc
	alloc     context.CancelFunc
	dataDir   string
	isolation Isolation
	once      sync.Once
	// clip is the lock of the browser's one clipboard (clipboard.go).
	clip sync.Mutex
}

// Isolation is how the browser was isolated (sandbox.go).
func (b *Browser) Isolation() Isolation { return b.isolation }

// LaunchBrowser starts headless Chromium. ctx bounds the launch only; the
// browser lives until Close.
func LaunchBrowser(ctx context.Context, opts ...BrowserOption) (*Browser, error) {
	cfg := browserConfig{execPath: DefaultExecPath(), sandbox: SandboxAuto}
	for _, o := range opts {
		o(&cfg)
	}
	iso, err := isolation(cfg.sandbox)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "asyncwebrl-chromium-")
	if err != nil {
		return nil, fmt.Errorf("unable to create a user-data dir: %w", err)
	}
	if iso.UID >= 0 {
		if err := sandboxDir(dir, iso.UID); err != nil {
			_ = os.RemoveAll(dir)
			return nil, err
		}
	}
	flags := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(cfg.execPath),
		chromedp.UserDataDir(dir),
		chromedp.Flag("headless", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-frame-rate-limit", true),
		chromedp.Flag("disable-gpu-vsync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		// Several tabs run episodes at once: none may be throttled as a
		// background tab.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		// go_back must load the page again (a bfcache restore fires no load
		// event and keeps stale page state); no translate bar either.
		chromedp.Flag("disable-features", "BackForwardCache,Translate,MediaRouter"),
		chromedp.Flag("disable-popup-blocking", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.Flag("use-mock-keychain", true),
		chromedp.Flag("force-color-profile", "srgb"),
	}
	if iso.Sandbox {
		flags = append(flags, chromedp.Flag("no-sandbox", false))
	}
	// The browser gets no environment of ours (credentials may be in it):
	// only a home in its user-data dir, a path, and the time zone and temp
	// dir when set.
	env := []string{"HOME=" + dir, "PATH=/usr/local/bin:/usr/bin:/bin"}
	for _, k := range []string{"TZ", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	flags = append(flags, chromedp.NoInheritEnv, chromedp.Env(env...))
	flags = append(flags, cfg.extra...)
	// The one ModifyCmdFunc (a later one would replace it): chromedp's
	// default kill on our exit, the sandbox user, then WithCmdModifier's.
	flags = append(flags, chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
		if iso.UID >= 0 {
			cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(iso.UID), Gid: SandboxGID, NoSetGroups: true}
		}
		for _, f := range cfg.modifiers {
			f(cmd)
		}
	}))
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), flags...)
	bctx, bcancel := chromedp.NewContext(allocCtx)
	b := &Browser{ctx: bctx, cancel: bcancel, alloc: allocCancel, dataDir: dir, isolation: iso}
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }() // starts the browser, bound to bctx (no timeout)
	select {
	case err := <-started:
		if err != nil {
			_ = b.Close()
			return nil, fmt.Errorf("unable to start chromium %s: %w", cfg.execPath, err)
		}
	case <-ctx.Done():
		_ = b.Close()
		return nil, fmt.Errorf("unable to start chromium: %w", ctx.Err())
	}
	return b, nil
}

// Close stops the browser and removes its user-data dir.
func (b *Browser) Close() error {
	var err error
	b.once.Do(func() {
		b.cancel()
		b.alloc() // waits for the process to exit
		if rerr := os.RemoveAll(b.dataDir); rerr != nil {
			err = errors.Join(err, fmt.Errorf("unable to remove %s: %w", b.dataDir, rerr))
		}
	})
	return err
}

// ParseBrowserFlags turns "name" and "name=value" switches into options;
// "no-name" removes a switch the launcher sets by default.
func ParseBrowserFlags(specs []string) ([]BrowserOption, error) {
	var out []BrowserOption
	for _, s := range specs {
		name, value, hasValue := strings.Cut(strings.TrimLeft(s, "-"), "=")
		if name == "" {
			return nil, fmt.Errorf("invalid Chromium switch %q", s)
		}
		switch {
		case hasValue:
			out = append(out, WithBrowserFlag(name, value))
		case strings.HasPrefix(name, "no-"):
			out = append(out, WithBrowserFlag(strings.TrimPrefix(name, "no-"), false))
		default:
			out = append(out, WithBrowserFlag(name, true))
		}
	}
	return out, nil
}
