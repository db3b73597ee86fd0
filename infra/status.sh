#!/usr/bin/env bash
# One line per local service; exit 0 only when all of them are running.
set -uo pipefail
source "$(dirname "$0")/lib.sh"

each_service status 3 kafka clickhouse
