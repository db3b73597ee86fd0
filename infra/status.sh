#!/usr/bin/env bash
# One line per local service; exit 0 only when all of them are running.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

rc=0
"$INFRA_DIR/kafka.sh" status || rc=3
"$INFRA_DIR/clickhouse.sh" status || rc=3
exit $rc
