package env

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Browser isolation. Task pages are untrusted code. Chromium refuses its
// sandbox as root, so the launcher used to pass --no-sandbox and every
// renderer ran as root without seccomp. Now, when this process is root,
// Chromium runs as an unprivileged user (SandboxUID, "nobody") with its
// sandbox on (user namespaces plus seccomp-bpf: checked here with
// setpriv + unshare -U and a headless shell run as nobody). Where user
// namespaces are unavailable the browser still runs as the unprivileged
// user, with --no-sandbox, and the launcher says so once.

// Sandbox modes (WithSandbox).
const (
	// SandboxAuto (the default): as root, Chromium runs as SandboxUID with
	// its sandbox when user namespaces work, else as SandboxUID without it;
	// as another user, with its sandbox when user namespaces work.
	SandboxAuto = "auto"
	// SandboxOff is the launcher before 12-05: --no-sandbox, as this
	// process's user (root included).
	SandboxOff = "off"
)

// SandboxUID and SandboxGID are the unprivileged user and group a root
// process runs Chromium as (Debian's nobody and nogroup).
const (
	SandboxUID = 65534
	SandboxGID = 65534
)

// WithSandbox sets how Chromium is isolated: SandboxAuto (default) or
// SandboxOff.
func WithSandbox(mode string) BrowserOption {
	return func(c *browserConfig) { c.sandbox = mode }
}

// WithCmdModifier changes Chromium's exec.Cmd before it starts (e.g. to
// put it in its own process group); modifiers run in order, after the
// launcher's own (the sandbox user).
func WithCmdModifier(f func(*exec.Cmd)) BrowserOption {
	return func(c *browserConfig) { c.modifiers = append(c.modifiers, f) }
}

// Isolation is how a launch isolates Chromium.
type Isolation struct {
	// UID is the user Chromium runs as (-1: this process's).
	UID int
	// Sandbox: Chromium's own sandbox is on (no --no-sandbox).
	Sandbox bool
	// Why is the reason when the sandbox is off.
	Why string
}

// userNamespaces reports, once, whether an unprivileged process can create
// a user namespace (Chromium's sandbox needs one without its setuid
// helper, which Debian does not ship).
var userNamespaces = sync.OnceValues(func() (bool, error) {
	b, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err != nil {
		return false, fmt.Errorf("unable to read max_user_namespaces: %w", err)
	}
	if string(b) == "0\n" {
		return false, errors.New("user namespaces are disabled (user.max_user_namespaces = 0)")
	}
	// The probe: unshare(1) as the user Chromium will run as. Without
	// unshare, the sysctl above is all there is to go by.
	path, err := exec.LookPath("unshare")
	if err != nil {
		return true, nil
	}
	probe := exec.Command(path, "--user", "true")
	if os.Geteuid() == 0 {
		probe.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: SandboxUID, Gid: SandboxGID, NoSetGroups: true}}
	}
	if out, err := probe.CombinedOutput(); err != nil {
		return false, fmt.Errorf("unable to create a user namespace as uid %d: %v (%s)", SandboxUID, err, strings.TrimSpace(string(out)))
	}
	return true, nil
})

// isolation decides a launch's isolation for mode.
func isolation(mode string) (Isolation, error) {
	switch mode {
	case SandboxOff:
		return Isolation{UID: -1, Why: "the sandbox is off (-browser-sandbox off)"}, nil
	case SandboxAuto, "":
	default:
		return Isolation{}, fmt.Errorf("invalid browser sandbox %q: want %s or %s", mode, SandboxAuto, SandboxOff)
	}
	iso := Isolation{UID: -1}
	if os.Geteuid() == 0 {
		iso.UID = SandboxUID
	}
	if ok, err := userNamespaces(); ok {
		iso.Sandbox = true
	} else {
		iso.Why = err.Error()
	}
	return iso, nil
}

// sandboxDir gives the user-data dir to uid, and checks that uid can reach
// it: every directory above it must let others through (a 0700 TMPDIR
// would not).
func sandboxDir(dir string, uid int) error {
	if err := os.Chown(dir, uid, SandboxGID); err != nil {
		return fmt.Errorf("unable to give the user-data dir to uid %d: %w", uid, err)
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("unable to check the user-data dir's parent %s: %w", p, err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("unable to run the browser as uid %d: %s (above its user-data dir) does not let other users through; set TMPDIR to a directory they can reach, or -browser-sandbox off", uid, p)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}
