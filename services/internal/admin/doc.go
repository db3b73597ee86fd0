// Package admin serves the operational HTTP endpoints of every process:
// /healthz (aggregated health of the running services), /metrics
// (Prometheus text format; labels limited to target, topic and partition —
// per-record data goes to ClickHouse, never to metrics) and /debug/pprof,
// which is always on so that a profile can be taken without Pyroscope.
package admin
