package env

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/asyncwebrl/asyncwebrl/infra/testenv"
	"github.com/asyncwebrl/asyncwebrl/services/internal/procstat"
)

// ownerOf is a file's owner uid.
func ownerOf(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// A browser launched as root runs as SandboxUID with Chromium's sandbox on:
// no --no-sandbox, its renderers under seccomp, and none of this process's
// environment (a secret in it never reaches the browser).
func TestIntegrationSandboxedBrowser(t *testing.T) {
	testenv.Integration(t)
	t.Setenv("ASYNCWEBRL_TEST_SECRET", "hunter2-sandbox")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := LaunchBrowser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	iso := b.Isolation()
	t.Logf("isolation %+v", iso)
	tctx, tcancel := chromedp.NewContext(b.Context())
	defer tcancel()
	if _, err := chromedp.Run(tctx, chromedp.Navigate("data:text/html,<p id=p>sandboxed</p>")); err != nil {
		t.Fatal(err)
	}
	if text, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.getElementById("p").textContent`)); err != nil || text != "sandboxed" {
		t.Fatalf("page: %q, %v", text, err)
	}
	main := b.Process()
	if main == nil {
		t.Fatal("no browser process")
	}
	status := func(pid int, field string) string {
		s, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		for _, line := range strings.Split(string(s), "\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				return strings.Fields(v)[0]
			}
		}
		return ""
	}
	if os.Geteuid() == 0 && status(main.Pid, "Uid") != strconv.Itoa(SandboxUID) {
		t.Errorf("the browser runs as uid %s, want %d", status(main.Pid, "Uid"), SandboxUID)
	}
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(main.Pid) + "/cmdline")
	if iso.Sandbox == bytes.Contains(cmdline, []byte("--no-sandbox")) {
		t.Errorf("isolation %+v, command line %q", iso, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
	}
	environ, err := os.ReadFile("/proc/" + strconv.Itoa(main.Pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(environ, []byte("hunter2")) || !bytes.Contains(environ, []byte("HOME="+b.DataDir())) {
		t.Errorf("the browser's environment: %q", bytes.ReplaceAll(environ, []byte{0}, []byte{' '}))
	}
	if !iso.Sandbox {
		t.Skipf("no sandbox here: %s", iso.Why)
	}
	// Every renderer is under seccomp-bpf (Seccomp: 2).
	renderers := 0
	for _, pid := range procstat.Descendants(main.Pid) {
		cl, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if !bytes.Contains(cl, []byte("--type=renderer")) {
			continue
		}
		renderers++
		if s := status(pid, "Seccomp"); s != "2" {
			t.Errorf("renderer %d: Seccomp %q, want 2 (filter)", pid, s)
		}
	}
	if renderers == 0 {
		t.Error("no renderer process found")
	}
}
