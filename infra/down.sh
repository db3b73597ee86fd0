#!/usr/bin/env bash
# Stop the local stack in the reverse order of up.sh. Data stays in $RUN_DIR.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

rc=0
"$INFRA_DIR/clickhouse.sh" stop || rc=1
"$INFRA_DIR/kafka.sh" stop || rc=1
exit $rc
