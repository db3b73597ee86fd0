package kafka

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Reachability follows, for every broker address the process's clients talk
// to, whether requests to it get through: a kgo hook on every client (Opts
// adds Reach). A broker is down from its first failed dial or request with
// no success since; it is up again at its next success. Health and progress
// lines read it, so a broker outage shows as what it is instead of as
// silence.
type Reachability struct {
	mu    sync.Mutex
	addrs map[string]*reach
	now   func() time.Time
}

type reach struct {
	downSince time.Time // zero while up
	lastFail  time.Time
	err       string
}

// forgetAfter: a broker address nobody has tried for this long is no longer
// one the clients use (it left the cluster's metadata), so its last failure
// says nothing about the cluster now.
const forgetAfter = 30 * time.Second

// Reach is this process's reachability, fed by every client built with Opts.
var Reach = NewReachability()

// NewReachability returns an empty tracker (every broker up).
func NewReachability() *Reachability {
	return &Reachability{addrs: map[string]*reach{}, now: time.Now}
}

var (
	_ kgo.HookBrokerConnect = (*Reachability)(nil)
	_ kgo.HookBrokerE2E     = (*Reachability)(nil)
)

// OnBrokerConnect implements kgo.HookBrokerConnect.
func (r *Reachability) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	r.observe(meta, err)
}

// OnBrokerE2E implements kgo.HookBrokerE2E: a request that was written and
// read back (or failed doing so).
func (r *Reachability) OnBrokerE2E(meta kgo.BrokerMetadata, _ int16, e2e kgo.BrokerE2E) {
	r.observe(meta, e2e.Err())
}

func (r *Reachability) observe(meta kgo.BrokerMetadata, err error) {
	addr := net.JoinHostPort(meta.Host, fmt.Sprint(meta.Port))
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.addrs[addr]
	if err == nil {
		if a != nil {
			delete(r.addrs, addr)
		}
		return
	}
	if a == nil {
		a = &reach{downSince: now}
		r.addrs[addr] = a
	}
	a.lastFail, a.err = now, err.Error()
}

// Down describes the brokers that are down now ("" when none is): each
// address, for how long, and its last error. A broker must have been down
// for at least grace, so one refused dial during a restart of the
// connection is not an outage.
func (r *Reachability) Down(grace time.Duration) string {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out string
	for _, addr := range slices.Sorted(maps.Keys(r.addrs)) {
		a := r.addrs[addr]
		if now.Sub(a.lastFail) > forgetAfter {
			delete(r.addrs, addr)
			continue
		}
		if now.Sub(a.downSince) < grace {
			continue
		}
		if out != "" {
			out += "; "
		}
		out += fmt.Sprintf("Kafka broker %s unreachable for %s (%s)", addr, now.Sub(a.downSince).Round(time.Second), a.err)
	}
	return out
}
