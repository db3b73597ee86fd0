#!/usr/bin/env bash
# Stop the local stack in the reverse order of up.sh. Data stays in $RUN_DIR.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

each_service stop 1 lm-server clickhouse kafka
