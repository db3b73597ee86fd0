package drill

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/asyncwebrl/asyncwebrl/infra/launch"
	"github.com/asyncwebrl/asyncwebrl/infra/netlab"
)

// Network faults. The drill's cluster is built across network namespaces
// of its own (infra/netlab): each broker in one, the joiner members in
// one, the real actors (with their webenv and browsers) in one, joined by
// a bridge; the drill, the recorder and the learner stay in the drill's own
// namespace, linked to the bridge. Clients reach each broker through a
// proxy on that link (the broker's advertised address), the brokers reach
// each other and the quorum directly. A partition is a host's link taken
// down; latency and loss are the proxies' toxics on the named clients.

// labFaults need the network lab; clickhouse-latency needs only a proxy.
var labFaults = []string{"broker-partition", "actor-partition", "joiner-latency"}

// netFaults are the faults that last --net-down instead of --down.
var netFaults = append(slices.Clone(labFaults), "clickhouse-latency")

// dropLabFaults removes the faults that need namespaces from s, saying so
// in one line, when the lab cannot be built here (why is not nil).
func dropLabFaults(s []scheduled, why error, say func(string, ...any)) []scheduled {
	var dropped []string
	out := slices.DeleteFunc(slices.Clone(s), func(f scheduled) bool {
		if slices.Contains(labFaults, f.name) {
			dropped = append(dropped, f.name)
			return true
		}
		return false
	})
	if len(dropped) > 0 {
		say("network namespaces are not available here (%v): skipping the faults %s", why, strings.Join(dropped, ", "))
	}
	return out
}

// needsLab: some fault of the schedule needs the network lab.
func (d *drillRun) needsLab() bool {
	return slices.ContainsFunc(d.flags.schedule, func(s scheduled) bool { return slices.Contains(labFaults, s.name) })
}

// buildLab makes the lab and the brokers' proxies and places the cluster's
// nodes in it; the returned func takes it down (after the cluster).
func (d *drillRun) buildLab() (func(), error) {
	lab, err := netlab.New()
	if err != nil {
		return nil, err
	}
	d.lab = lab
	closeAll := func() {
		for _, p := range d.brokerProxies {
			_ = p.Close()
		}
		if err := lab.Close(); err != nil {
			d.say("%v", err)
		}
	}
	var nodes []launch.Node
	for i := 1; i <= d.flags.nodes; i++ {
		h, err := lab.AddHost("b" + strconv.Itoa(i))
		if err != nil {
			closeAll()
			return nil, err
		}
		p, err := netlab.Listen(lab.Gateway+":0", d.cluster.Listener(i, h.Addr))
		if err != nil {
			closeAll()
			return nil, err
		}
		d.brokerProxies = append(d.brokerProxies, p)
		nodes = append(nodes, launch.Node{NS: h.NS, Host: h.Addr, Advertised: p.Addr()})
	}
	for _, name := range []string{"joiner", "actor"} {
		if _, err := lab.AddHost(name); err != nil {
			closeAll()
			return nil, err
		}
	}
	d.cluster.InNamespaces(nodes)
	d.say("network lab: brokers in namespaces %s..%s on %s.0/24, joiner members and actors in namespaces of their own, clients through proxies on %s",
		nodes[0].NS, nodes[len(nodes)-1].NS, lab.Gateway[:strings.LastIndex(lab.Gateway, ".")], lab.Gateway)
	return closeAll, nil
}

// downs says how long the schedule's faults last.
func (d *drillRun) downs() string {
	s := "each fault down " + d.flags.down.String()
	if slices.ContainsFunc(d.flags.schedule, func(f scheduled) bool { return slices.Contains(netFaults, f.name) }) {
		s += ", each network fault " + d.flags.netDown.String()
	}
	return s
}

// host is the lab host member m runs in ("" outside the lab).
func (d *drillRun) host(m *member) string {
	if d.lab == nil {
		return ""
	}
	role, _, _ := strings.Cut(m.name, "-")
	switch role {
	case "joiner":
		return "joiner"
	case "actor", "webenv":
		return "actor"
	}
	return ""
}

// injectNetwork starts network fault name and returns what it did, how to
// end it, and when the fault counts as over (its settled, for
// WatchRecovery).
func (d *drillRun) injectNetwork(name string, brokerNode int32, brokerWhat string) (what string, restore func() error, healed *atomic.Bool, err error) {
	healed = &atomic.Bool{}
	switch name {
	case "broker-partition":
		host := "b" + strconv.Itoa(int(brokerNode))
		if err := d.lab.Cut(host); err != nil {
			return "", nil, nil, err
		}
		what = fmt.Sprintf("cut broker %d (%s) off from the other brokers, the controller quorum and every client%s", brokerNode, d.lab.Host(host).Addr, brokerWhat)
		restore = func() error {
			err := d.lab.Heal(host)
			healed.Store(err == nil)
			return err
		}
	case "actor-partition":
		if err := d.lab.Cut("actor"); err != nil {
			return "", nil, nil, err
		}
		what = fmt.Sprintf("cut the actor's host (%s: the actor, its browsers and its webenv) off from every broker", d.lab.Host("actor").Addr)
		restore = func() error {
			err := d.lab.Heal("actor")
			healed.Store(err == nil)
			return err
		}
	case "joiner-latency":
		h := d.lab.Host("joiner")
		t := &netlab.Toxic{From: netip.PrefixFrom(netip.MustParseAddr(h.Addr), 32), Latency: d.flags.latency, Loss: d.flags.loss}
		for _, p := range d.brokerProxies {
			p.SetToxic(t)
		}
		what = fmt.Sprintf("%s latency each way and %.0f%% segment loss between the joiner members (%s) and every broker", d.flags.latency, 100*d.flags.loss, h.Addr)
		restore = func() error {
			for _, p := range d.brokerProxies {
				p.SetToxic(nil)
			}
			healed.Store(true)
			return nil
		}
	case "clickhouse-latency":
		d.chProxy.SetToxic(&netlab.Toxic{Latency: d.flags.latency})
		what = fmt.Sprintf("%s latency each way between the recorder members and ClickHouse %s", d.flags.latency, d.chProxy.Target())
		restore = func() error {
			d.chProxy.SetToxic(nil)
			healed.Store(true)
			return nil
		}
	default:
		return "", nil, nil, fmt.Errorf("unknown network fault %q", name)
	}
	return what, restore, healed, nil
}
