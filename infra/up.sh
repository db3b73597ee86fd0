#!/usr/bin/env bash
# Start the local stack (Kafka, then ClickHouse) and print its connection
# settings on stdout as KEY=VALUE lines, so `set -a; eval "$(infra/up.sh)"`
# configures a shell. Progress goes to stderr. Idempotent.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

"$INFRA_DIR/kafka.sh" start >&2
"$INFRA_DIR/clickhouse.sh" start >&2

echo "ASYNCWEBRL_BROKERS=$("$INFRA_DIR/kafka.sh" brokers)"
echo "ASYNCWEBRL_CLICKHOUSE_ADDR=127.0.0.1:$CLICKHOUSE_TCP_PORT"
