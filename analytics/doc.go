// Package analytics owns everything AsyncWebRL keeps in ClickHouse: the
// versioned migrations (Migrate), the flattening of every event into its raw
// table (Rows, one INSERT per table), consumer-lag snapshots (InsertLag), the
// saved queries behind `asyncwebrl query` and the dashboard (Queries, Run,
// Result.Write), and the connection helper (Open). README.md documents the
// tables, the duplicate-proof materialized views and every saved query.
//
// The native protocol goes through clickhouse-go/v2 v2.26.0, pinned on
// purpose: later releases cannot batch-insert into ClickHouse 18.16, the
// server Debian ships and infra/clickhouse.sh runs locally. SQL here runs on
// 18.16 and on current ClickHouse alike (no DateTime64, LowCardinality, TTL,
// window functions or server-side parameters; one statement per request).
package analytics
