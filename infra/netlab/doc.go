// Package netlab builds a private network of Linux network namespaces on
// this machine, for fault drills that need real network faults rather than
// a killed process: a hub namespace holding a bridge, one namespace per
// host joined to the bridge by a veth pair, and one veth pair from the
// caller's own namespace, so the processes it runs keep talking to the
// hosts. Every address is private (10.231.x.0/24) and every link lives
// inside the machine: nothing reaches another host.
//
// A partition is a host's bridge port taken down (Cut): its established
// connections stall as a pulled cable would, and new ones find no route.
// This kernel has no netem and the machine no iptables or nft, so latency
// and loss come from Proxy, a userspace TCP proxy placed in front of a
// listener, which delays (and, for loss, delays by a retransmission
// timeout) the data of the clients a Toxic names by address.
package netlab
