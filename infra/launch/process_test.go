package launch

import (
	"strings"
	"testing"
)

func TestLastError(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ script, want string }{
		{`echo "level=ERROR msg=first"; echo "level=ERROR msg=\"unable to commit\""; echo "level=INFO msg=stopping"; exit 1`, `level=ERROR msg="unable to commit"`},
		{`echo "level=INFO msg=started"; echo "panic: boom"; exit 2`, "panic: boom"},
	} {
		p, err := StartProcess("/bin/sh", dir, "member", nil, "-c", c.script)
		if err != nil {
			t.Fatal(err)
		}
		<-p.Done
		if p.Err == nil {
			t.Fatalf("%q exited cleanly", c.script)
		}
		// The log is appended to: only the second run's own lines count.
		if got := p.LastError(); !strings.Contains(got, c.want) {
			t.Errorf("LastError() = %q, want %q", got, c.want)
		}
	}
}
