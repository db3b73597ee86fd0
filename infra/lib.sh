# Shared helpers for the infra/ scripts. Sourced, never run.
# Every script derives its paths from here so that the README, CI and the
# integration tests agree on where things live.

INFRA_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$INFRA_DIR/.." && pwd)
RUN_DIR=${ASYNCWEBRL_RUN_DIR:-$REPO_DIR/.run}

# Ports are loopback-only; override them to run several stacks side by side.
KAFKA_PORT=${KAFKA_PORT:-19092}
KAFKA_CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-19093}
CLICKHOUSE_TCP_PORT=${CLICKHOUSE_TCP_PORT:-19000}
CLICKHOUSE_HTTP_PORT=${CLICKHOUSE_HTTP_PORT:-18123}

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# port_open HOST PORT: true when something accepts TCP connections there.
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# pid_running PID: true while PID exists and is not a zombie (a killed server
# can linger as a zombie until init reaps it; kill -0 alone says it is alive).
pid_running() {
  kill -0 "$1" 2>/dev/null || return 1
  case $(ps -o stat= -p "$1" 2>/dev/null) in Z* | '') return 1 ;; esac
}

# pid_alive FILE: true when FILE names a running process.
pid_alive() { [ -f "$1" ] && pid_running "$(cat "$1")"; }

# wait_port HOST PORT SECONDS NAME LOGFILE
wait_port() {
  local i
  for ((i = 0; i < $3 * 5; i++)); do
    port_open "$1" "$2" && return 0
    sleep 0.2
  done
  [ -n "${5:-}" ] && [ -f "$5" ] && tail -n 30 "$5" >&2
  die "$4 did not accept connections on $1:$2 within $3s"
}

# stop_pid FILE NAME: SIGTERM, wait up to 30s, then SIGKILL.
stop_pid() {
  local pidfile=$1 name=$2 pid i
  if ! pid_alive "$pidfile"; then rm -f "$pidfile"; log "$name: not running"; return 0; fi
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  for ((i = 0; i < 150; i++)); do
    pid_running "$pid" || { rm -f "$pidfile"; log "$name: stopped"; return 0; }
    sleep 0.2
  done
  log "$name: did not stop in 30s, killing"
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$pidfile"
}

# --- service lifecycle helpers shared by kafka.sh and clickhouse.sh ---

# take_lock FILE: serialise start/stop of one service (two engineers running
# `start` at once would otherwise format storage or launch twice).
take_lock() {
  mkdir -p "$(dirname "$1")"
  exec 9>"$1"
  flock -w 180 9 || die "could not take lock $1 within 180s"
}

# rotate_log FILE: keep one previous log, so readiness checks only read this run.
rotate_log() { [ -f "$1" ] && mv -f "$1" "$1.prev"; return 0; }

# launch PIDFILE OUTFILE CMD...: run CMD detached in its own session (it
# survives the calling shell and its process group), stdout+stderr to OUTFILE.
launch() {
  local pidfile=$1 out=$2
  shift 2
  # Without job control the background child is not a group leader, so setsid
  # and nohup exec in place and $! is the server's own pid.
  # 9>&- : the server must not inherit (and so hold forever) take_lock's lock.
  setsid nohup "$@" >>"$out" 2>&1 </dev/null 9>&- &
  echo $! >"$pidfile"
}

# elapsed_since START_NS: seconds with one decimal since `date +%s%N` START_NS.
elapsed_since() { awk -v s="$1" -v e="$(date +%s%N)" 'BEGIN { printf "%.1f", (e - s) / 1e9 }'; }

# await_ready NAME PIDFILE SECONDS START_NS ADOPT CHECK WHERE LOG...: poll every
# 0.2s, for up to SECONDS, until the command CHECK succeeds, then log "NAME ready
# on WHERE (pid P) in Ts". When the process of PIDFILE exits first: with
# ADOPT=adopt return 2 (the caller starts it afresh), else show the last 40
# lines of each LOG and die; out of time, the same, the process left running.
await_ready() {
  local name=$1 pidfile=$2 secs=$3 start=$4 adopt=$5 check=$6 where=$7 i logs
  shift 7
  logs=$(printf '%s, ' "$@")
  for ((i = 0; i < secs * 5; i++)); do
    if ! pid_alive "$pidfile"; then
      [ "$adopt" = adopt ] && return 2
      tail -n 40 "$@" >&2 2>/dev/null || true
      die "$name exited during startup (logs: ${logs%, })"
    fi
    if "$check"; then
      log "$name ready on $where (pid $(cat "$pidfile")) in $(elapsed_since "$start")s"
      return 0
    fi
    sleep 0.2
  done
  tail -n 40 "$@" >&2 2>/dev/null || true
  die "$name not ready within ${secs}s (pid $(cat "$pidfile") left running; run '$0 stop')"
}

# show_log NAME FILE [-f|N]: the last 100 lines of the log FILE, its last N,
# or (-f) follow it.
show_log() {
  [ -f "$2" ] || die "$1: no log at $2"
  case "${3:-}" in
    -f) exec tail -n 50 -F "$2" ;;
    '') tail -n 100 "$2" ;;
    *) tail -n "$3" "$2" ;;
  esac
}

# each_service VERB RC SERVICE...: infra/SERVICE.sh VERB for every SERVICE in
# turn, the later ones too when one fails; RC when any failed, else 0.
each_service() {
  local verb=$1 fail=$2 s rc=0
  shift 2
  for s in "$@"; do "$INFRA_DIR/$s.sh" "$verb" || rc=$fail; done
  return "$rc"
}
