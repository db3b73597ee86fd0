package netlab

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Lab is one private network. The zero value is not usable: New.
type Lab struct {
	// Gateway is the caller's address on the lab (10.231.x.1): listeners
	// the hosts must reach (proxies) bind to it.
	Gateway string
	prefix  string // awrl-<pid>-: its namespaces' names
	subnet  string // 10.231.x
	hub     string // the hub namespace
	rootIf  string // the caller's end of its veth pair

	mu    sync.Mutex
	hosts map[string]*Host
	next  int
}

// Host is one namespace of the lab.
type Host struct {
	// Name is what the caller called it; NS the namespace's name; Addr its
	// IPv4 address on the lab.
	Name, NS, Addr string
	port           string // its bridge port in the hub
}

// Available reports why the lab cannot be built here (nil when it can):
// the `ip` tool missing, or a network namespace refused (not root, or a
// sandbox without CAP_SYS_ADMIN or network namespaces).
func Available() error {
	if _, err := exec.LookPath("ip"); err != nil {
		return errors.New("no `ip` tool (iproute2) on PATH")
	}
	name := "awrl-" + strconv.Itoa(os.Getpid()) + "-probe"
	if out, err := ip("netns", "add", name); err != nil {
		return fmt.Errorf("unable to create a network namespace: %s", out)
	}
	if out, err := ip("-n", name, "link", "add", "probe0", "type", "veth", "peer", "name", "probe1"); err != nil {
		_, _ = ip("netns", "del", name)
		return fmt.Errorf("unable to create a veth pair: %s", out)
	}
	_, _ = ip("netns", "del", name)
	return nil
}

// New builds an empty lab: the hub with its bridge, and the caller's link
// to it at Gateway. Namespaces and links left by labs of processes that no
// longer run are removed first. Close takes it all down.
func New() (*Lab, error) {
	sweep()
	pid := strconv.Itoa(os.Getpid())
	l := &Lab{prefix: "awrl-" + pid + "-", rootIf: "awrl" + pid, hosts: map[string]*Host{}}
	subnet, err := freeSubnet(pid)
	if err != nil {
		return nil, err
	}
	l.subnet, l.Gateway, l.hub = subnet, subnet+".1", l.prefix+"hub"
	steps := [][]string{
		{"netns", "add", l.hub},
		{"-n", l.hub, "link", "add", "br0", "type", "bridge"},
		{"-n", l.hub, "link", "set", "br0", "up"},
		{"link", "add", l.rootIf, "type", "veth", "peer", "name", "up0", "netns", l.hub},
		{"addr", "add", l.Gateway + "/24", "dev", l.rootIf},
		{"link", "set", l.rootIf, "up"},
		{"-n", l.hub, "link", "set", "up0", "master", "br0", "up"},
	}
	for _, s := range steps {
		if out, err := ip(s...); err != nil {
			_ = l.Close()
			return nil, fmt.Errorf("unable to build the lab's hub (ip %s): %s", strings.Join(s, " "), out)
		}
	}
	return l, nil
}

// AddHost creates a namespace for name, with loopback up and an address on
// the lab, linked to the bridge.
func (l *Lab) AddHost(name string) (*Host, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h, ok := l.hosts[name]; ok {
		return h, nil
	}
	if l.next >= 200 {
		return nil, errors.New("unable to add a host: the lab is full (200)")
	}
	l.next++
	h := &Host{Name: name, NS: l.prefix + name, Addr: l.subnet + "." + strconv.Itoa(10+l.next), port: "p" + strconv.Itoa(l.next)}
	steps := [][]string{
		{"netns", "add", h.NS},
		{"-n", h.NS, "link", "set", "lo", "up"},
		{"-n", l.hub, "link", "add", h.port, "type", "veth", "peer", "name", "eth0", "netns", h.NS},
		{"-n", l.hub, "link", "set", h.port, "master", "br0", "up"},
		{"-n", h.NS, "addr", "add", h.Addr + "/24", "dev", "eth0"},
		{"-n", h.NS, "link", "set", "eth0", "up"},
	}
	for _, s := range steps {
		if out, err := ip(s...); err != nil {
			_, _ = ip("netns", "del", h.NS)
			return nil, fmt.Errorf("unable to add host %s to the lab (ip %s): %s", name, strings.Join(s, " "), out)
		}
	}
	l.hosts[name] = h
	return h, nil
}

// Host returns the host called name, or nil.
func (l *Lab) Host(name string) *Host {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hosts[name]
}

// Cut takes host name's bridge port down: it is partitioned from every
// other host and from the caller until Heal.
func (l *Lab) Cut(name string) error { return l.setPort(name, "down") }

// Heal brings host name's bridge port back up.
func (l *Lab) Heal(name string) error { return l.setPort(name, "up") }

func (l *Lab) setPort(name, state string) error {
	h := l.Host(name)
	if h == nil {
		return fmt.Errorf("unable to set host %s's link %s: no such host", name, state)
	}
	if out, err := ip("-n", l.hub, "link", "set", h.port, state); err != nil {
		return fmt.Errorf("unable to set host %s's link %s: %s", name, state, out)
	}
	return nil
}

// Command returns the program and arguments that run bin with args inside
// host name's namespace (`ip netns exec`, which execs bin in place: the
// process's pid is bin's, so a kill reaches it).
func (l *Lab) Command(name, bin string, args ...string) (string, []string) {
	h := l.Host(name)
	if h == nil {
		return bin, args
	}
	return "ip", append([]string{"netns", "exec", h.NS, bin}, args...)
}

// Close deletes the lab's namespaces (their veth ends go with them) and
// the caller's link. Processes still running in a namespace keep it alive
// but cut off; the caller stops them first.
func (l *Lab) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []error
	for _, h := range l.hosts {
		if out, err := ip("netns", "del", h.NS); err != nil {
			errs = append(errs, fmt.Errorf("unable to delete namespace %s: %s", h.NS, out))
		}
	}
	l.hosts = map[string]*Host{}
	_, _ = ip("link", "del", l.rootIf) // gone already when the hub went first
	if out, err := ip("netns", "del", l.hub); err != nil && !strings.Contains(out, "No such file") {
		errs = append(errs, fmt.Errorf("unable to delete namespace %s: %s", l.hub, out))
	}
	return errors.Join(errs...)
}

// sweep removes what labs of dead processes left: namespaces awrl-<pid>-*
// (and the processes still in them) and links awrl<pid> whose pid no
// longer runs (a drill killed with -9, a test killed by its timeout).
func sweep() {
	out, err := ip("netns", "list")
	if err == nil {
		for _, line := range strings.Split(out, "\n") {
			name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
			if pid, ok := labPID(name, "awrl-"); ok && !alive(pid) {
				// What still runs in it (a broker of a drill killed with
				// -9) is cut off for good once it goes: stopped first.
				if pids, err := ip("netns", "pids", name); err == nil {
					for _, f := range strings.Fields(pids) {
						if p, err := strconv.Atoi(f); err == nil {
							_ = syscall.Kill(p, syscall.SIGKILL)
						}
					}
				}
				_, _ = ip("netns", "del", name)
			}
		}
	}
	if out, err = ip("-o", "link", "show"); err == nil {
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			if pid, ok := labPID(name+"-", "awrl"); ok && !alive(pid) {
				_, _ = ip("link", "del", name)
			}
		}
	}
}

// labPID reads the pid of a lab's name: prefix, digits, then "-".
func labPID(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(digits)
	return pid, ok && err == nil && pid > 0
}

func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

// freeSubnet picks 10.231.x (x from the pid, then the next free one) that
// no route of this namespace uses yet.
func freeSubnet(pid string) (string, error) {
	routes, err := ip("-4", "route", "show", "table", "all")
	if err != nil {
		return "", fmt.Errorf("unable to list routes: %s", routes)
	}
	h := fnv.New32a()
	h.Write([]byte(pid))
	start := int(h.Sum32() % 250)
	for i := range 250 {
		s := "10.231." + strconv.Itoa((start+i)%250+1)
		if !strings.Contains(routes, s+".") {
			return s, nil
		}
	}
	return "", errors.New("unable to find a free 10.231.x.0/24 for the lab")
}

// ip runs the ip tool and returns its combined output, trimmed.
func ip(args ...string) (string, error) {
	out, err := exec.Command("ip", args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
