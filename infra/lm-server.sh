#!/usr/bin/env bash
# A language model behind an OpenAI-compatible API on loopback: llama.cpp's
# llama-server on CPU serving SmolLM2-135M-Instruct (both from
# `infra/setup.sh lm`), for the openai policy backend's tests and runs.
#
#   infra/lm-server.sh start     start, wait until /health answers
#   infra/lm-server.sh stop      SIGTERM, SIGKILL after 30s
#   infra/lm-server.sh status    exit 0 running, 3 stopped
#   infra/lm-server.sh url       the base URL (-openai-base-url)
#   infra/lm-server.sh logs [N]
#
# Env: LM_PORT (18090), LM_PARALLEL slots (8: one per executor of make run),
#      LM_CTX tokens over all slots (16384: 2048 a slot), LM_THREADS (nproc),
#      ASYNCWEBRL_OPENAI_API_KEY (empty: none; given to the server in a
#      0600 file, never on its command line), ASYNCWEBRL_RUN_DIR (.run).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

HOST=127.0.0.1
PORT=${LM_PORT:-18090}
DIR=$RUN_DIR/lm
PIDFILE=$DIR/server.pid
OUTFILE=$DIR/server.log
MODEL=$DIR/SmolLM2-135M-Instruct.Q4_1.gguf
ALIAS=smollm2-135m-instruct

healthy() { curl -sf --max-time 2 "http://$HOST:$PORT/health" >/dev/null 2>&1; }

start() {
  take_lock "$DIR/.lock"
  if pid_alive "$PIDFILE" && healthy; then log "lm-server: running on $HOST:$PORT"; return 0; fi
  [ -x "$DIR/bin/llama-server" ] && [ -f "$MODEL" ] || die "lm-server: not installed; run infra/setup.sh lm"
  # Another checkout's server of the same model (a CI clone beside a
  # working copy) serves as well: the server holds no state of a run.
  if healthy && curl -sf --max-time 2 "http://$HOST:$PORT/v1/models" | grep -q "\"$ALIAS\""; then
    log "lm-server: $ALIAS already served on $HOST:$PORT"; return 0
  fi
  port_open "$HOST" "$PORT" && die "lm-server: $HOST:$PORT is taken by another process (set LM_PORT)"
  local args=(-m "$MODEL" --alias "$ALIAS" --host "$HOST" --port "$PORT" --parallel "${LM_PARALLEL:-8}"
    --ctx-size "${LM_CTX:-16384}" --threads "${LM_THREADS:-$(nproc)}" --no-warmup)
  if [ -n "${ASYNCWEBRL_OPENAI_API_KEY:-}" ]; then
    (umask 077 && printf '%s\n' "$ASYNCWEBRL_OPENAI_API_KEY" >"$DIR/api-key")
    args+=(--api-key-file "$DIR/api-key")
  else
    rm -f "$DIR/api-key"
  fi
  rotate_log "$OUTFILE"
  log "lm-server: starting llama-server ($ALIAS) on $HOST:$PORT"
  launch "$PIDFILE" "$OUTFILE" "$DIR/bin/llama-server" "${args[@]}"
  local i
  for ((i = 0; i < 300; i++)); do
    healthy && { log "lm-server: ready"; return 0; }
    pid_alive "$PIDFILE" || { tail -n 30 "$OUTFILE" >&2; die "lm-server: exited during start-up"; }
    sleep 0.2
  done
  tail -n 30 "$OUTFILE" >&2
  die "lm-server: /health did not answer within 60s"
}

case ${1:-} in
start) start ;;
stop) stop_pid "$PIDFILE" lm-server ;;
status) if pid_alive "$PIDFILE" && healthy; then echo running; else echo stopped; exit 3; fi ;;
url) echo "http://$HOST:$PORT" ;;
model) echo "$ALIAS" ;;
logs) tail -n "${2:-50}" "$OUTFILE" ;;
*) echo "usage: $0 start|stop|status|url|model|logs [N]" >&2; exit 2 ;;
esac
