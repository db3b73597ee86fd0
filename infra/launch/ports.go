package launch

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
)

// FreeRun returns a port p such that p, p+2, ... (n ports, kafka.sh's
// layout of a cluster's nodes) are all free.
func FreeRun(n int) int {
	for {
		p := Port()
		ok := true
		for i := 1; i < n && ok; i++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+2*i))
			if ok = err == nil; ok {
				_ = l.Close()
			}
		}
		if ok {
			return p
		}
	}
}

// nextPort spreads the ports of one process's calls, so two calls in a row
// do not both pick the first free one.
var nextPort atomic.Int64

// Port returns a loopback port nobody listens on now, below the ephemeral
// range so that an outgoing connection cannot take it meanwhile.
func Port() int {
	for p := 20000 + int((time.Now().UnixNano()+nextPort.Add(7))%10000); ; p++ {
		if p >= 30000 {
			p = 20000
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		_ = l.Close()
		return p
	}
}

// RepoDir is the repository's root this package was built from (where
// infra/ lives).
func RepoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// FindRepo is the repository a program runs in: the first directory from
// dir upwards that holds infra/kafka.sh, else the one this package was
// built from (a binary run outside its checkout).
func FindRepo(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "infra", "kafka.sh")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if _, err := os.Stat(filepath.Join(RepoDir(), "infra", "kafka.sh")); err == nil {
		return RepoDir(), nil
	}
	return "", fmt.Errorf("unable to find infra/kafka.sh above %s or in %s: run from the repository", dir, RepoDir())
}
