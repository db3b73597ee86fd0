// Package analytics owns everything AsyncWebRL keeps in ClickHouse: the DDL and
// its migrations, the saved queries behind `asyncwebrl query`, and the
// ClickHouse client that the recorder and the query command share.
//
// For now it holds the connection helper, Open, which speaks the native
// protocol through clickhouse-go/v2 v2.26.0. That version is pinned on
// purpose: later releases cannot batch-insert into ClickHouse 18.16, the
// server Debian ships and infra/clickhouse.sh runs locally. SQL written here
// must therefore run on 18.16 and on current ClickHouse alike (no DateTime64,
// TTL or window functions; `ENGINE = MergeTree() PARTITION BY ... ORDER BY ...`).
package analytics
