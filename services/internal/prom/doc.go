// Package prom declares a service's Prometheus metrics, all named
// asyncwebrl_<subsystem>_<name>, in one place: every service registered its
// own with its own helper (four copies, two of which reused a collector
// already registered under the name, two of which failed on it).
package prom
