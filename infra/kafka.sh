#!/usr/bin/env bash
# Local KRaft Kafka on loopback, run from the Maven jars that infra/setup.sh
# collects into $RUN_DIR/kafka/libs: one node (broker + controller in one
# JVM) by default, or a cluster of KAFKA_NODES such nodes with one
# controller quorum (the same jars, one process, node id, port pair and log
# dir per node).
#
#   infra/kafka.sh start          generate config, format storage once, start every node, wait for ready
#   infra/kafka.sh stop           SIGTERM (controlled shutdown), SIGKILL after 30s
#   infra/kafka.sh status         exit 0 running, 1 a process up but not answering, 3 stopped
#   infra/kafka.sh brokers        the bootstrap list, host:port,...
#   infra/kafka.sh kill NODE      SIGKILL one node (fault drills and tests)
#   infra/kafka.sh start-node NODE  start one node (again) and wait for it
#   infra/kafka.sh logs [-f|N] [NODE]
#   infra/kafka.sh credentials    with KAFKA_SECURE=1: the client flags for the SASL_SSL listener
#
# Env: KAFKA_NODES (the count the run dir was last started with, kept in
#      $RUN_DIR/kafka/nodes, else 1), KAFKA_PORT (19092), KAFKA_CONTROLLER_PORT (19093):
#      node i listens on KAFKA_PORT+2(i-1) and KAFKA_CONTROLLER_PORT+2(i-1);
#      ASYNCWEBRL_RUN_DIR (.run), KAFKA_HEAP (-Xmx640M; -Xmx384M each with
#      several nodes), KAFKA_READY_TIMEOUT seconds (90),
#      KAFKA_LIBS jar dir ($RUN_DIR/kafka/libs, else the repo's .run/kafka/libs),
#      KAFKA_SECURE=1: clients (and brokers among themselves) speak SASL_SSL
#      with SCRAM-SHA-512 instead of PLAINTEXT. The first start makes a CA
#      and each node's certificate with openssl ($KDIR/tls) and random
#      passwords for the users "asyncwebrl" and "broker" ($KDIR/scram, mode
#      600), which the storage format writes into the cluster's metadata
#      (Kafka's own --add-scram); `credentials` prints the client's flags.
#      A run dir remembers it, as it does KAFKA_NODES.
#      KAFKA_NETNS, KAFKA_HOSTS, KAFKA_ADVERTISED (comma lists, one item a
#      node; the drill's network lab, infra/netlab): node i runs in network
#      namespace i (`ip netns exec`), listens on host i instead of loopback
#      (clients on its port, the brokers among themselves on port+1, the
#      quorum on its controller port) and tells clients to reach it at
#      advertised address i (a proxy of the lab). Not with KAFKA_SECURE=1.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

HOST=127.0.0.1
KDIR=$RUN_DIR/kafka
# A run dir remembers how many nodes it was started with, so that status,
# stop, brokers and kill reach every node of a cluster without KAFKA_NODES
# being given again (`make up KAFKA_NODES=3`, then `make status`).
NODES=${KAFKA_NODES:-}
if [ -z "$NODES" ] && [ -s "$KDIR/nodes" ]; then NODES=$(cat "$KDIR/nodes"); fi
NODES=${NODES:-1}
[[ "$NODES" =~ ^[1-9]$ ]] || die "kafka: KAFKA_NODES must be 1..9, not '$NODES'"
# A stack in another ASYNCWEBRL_RUN_DIR reuses the jars setup.sh put in the repo's .run.
LIBS=${KAFKA_LIBS:-$KDIR/libs}
if ! ls "$LIBS"/kafka_2.13-*.jar >/dev/null 2>&1 && [ -z "${KAFKA_LIBS:-}" ]; then
  LIBS=$REPO_DIR/.run/kafka/libs
fi
if [ "$NODES" -gt 1 ]; then KAFKA_HEAP=${KAFKA_HEAP:--Xmx384M}; else KAFKA_HEAP=${KAFKA_HEAP:--Xmx640M}; fi
READY_TIMEOUT=${KAFKA_READY_TIMEOUT:-90}
SECURE=${KAFKA_SECURE:-}
if [ -z "$SECURE" ] && [ -s "$KDIR/secure" ]; then SECURE=$(cat "$KDIR/secure"); fi
[ "$SECURE" = 1 ] || SECURE=0
TLS=$KDIR/tls
SCRAM=$KDIR/scram
SCRAM_USER=asyncwebrl
IFS=, read -r -a NETNS <<<"${KAFKA_NETNS:-}"
IFS=, read -r -a HOSTS <<<"${KAFKA_HOSTS:-}"
IFS=, read -r -a ADVERTISED <<<"${KAFKA_ADVERTISED:-}"
if [ "${#NETNS[@]}" -gt 0 ]; then
  [ "${#NETNS[@]}" -eq "$NODES" ] && [ "${#HOSTS[@]}" -eq "$NODES" ] && [ "${#ADVERTISED[@]}" -eq "$NODES" ] \
    || die "kafka: KAFKA_NETNS, KAFKA_HOSTS and KAFKA_ADVERTISED need one item for each of the $NODES nodes"
  [ "$SECURE" = 1 ] && die "kafka: KAFKA_NETNS does not go with KAFKA_SECURE=1"
fi

# node I: sets NODE, PORT, CPORT and the node's files. A single node keeps
# the layout it always had ($KDIR/data, $KDIR/kafka.pid, ...); the nodes of
# a cluster live in $KDIR/node<I>/.
node() {
  NODE=$1
  [[ "$NODE" =~ ^[0-9]+$ ]] && [ "$NODE" -ge 1 ] && [ "$NODE" -le "$NODES" ] || die "kafka: no node '$NODE' (KAFKA_NODES=$NODES)"
  PORT=$((KAFKA_PORT + 2 * (NODE - 1)))
  CPORT=$((KAFKA_CONTROLLER_PORT + 2 * (NODE - 1)))
  HOST=127.0.0.1 ADV=$HOST:$PORT EXEC=()
  if [ "${#NETNS[@]}" -gt 0 ]; then
    HOST=${HOSTS[NODE - 1]} ADV=${ADVERTISED[NODE - 1]} EXEC=(ip netns exec "${NETNS[NODE - 1]}")
  fi
  if [ "$NODES" -eq 1 ]; then NDIR=$KDIR; else NDIR=$KDIR/node$NODE; fi
  DATA=$NDIR/data
  PIDFILE=$NDIR/kafka.pid
  LOGFILE=$NDIR/server.log
  OUTFILE=$NDIR/stdout.log
  PROPS=$NDIR/server.properties
  LOG4J=$NDIR/log4j2.properties
}

running() { pid_alive "$PIDFILE" && port_open "$HOST" "$PORT"; }

voters() {
  local i out="" h
  for ((i = 1; i <= NODES; i++)); do
    h=127.0.0.1
    [ "${#HOSTS[@]}" -gt 0 ] && h=${HOSTS[i - 1]}
    out+="${out:+,}$i@$h:$((KAFKA_CONTROLLER_PORT + 2 * (i - 1)))"
  done
  echo "$out"
}

brokers() {
  local i out=""
  for ((i = 1; i <= NODES; i++)); do
    if [ "${#ADVERTISED[@]}" -gt 0 ]; then
      out+="${out:+,}${ADVERTISED[i - 1]}"
    else
      out+="${out:+,}127.0.0.1:$((KAFKA_PORT + 2 * (i - 1)))"
    fi
  done
  echo "$out"
}

# listeners: the client listener's lines, PLAINTEXT or (KAFKA_SECURE=1)
# SASL_SSL with SCRAM-SHA-512, the brokers among themselves too (as user
# "broker"). The controller listener stays plaintext on loopback.
listeners() {
  if [ "${#NETNS[@]}" -gt 0 ]; then
    # Clients go through the lab's proxy (ADV); replication goes host to
    # host, so that a cut node is cut from the other brokers too.
    cat <<EOF
listeners=PLAINTEXT://$HOST:$PORT,INTERNAL://$HOST:$((PORT + 1)),CONTROLLER://$HOST:$CPORT
advertised.listeners=PLAINTEXT://$ADV,INTERNAL://$HOST:$((PORT + 1))
inter.broker.listener.name=INTERNAL
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,INTERNAL:PLAINTEXT
EOF
    return
  fi
  if [ "$SECURE" = 0 ]; then
    cat <<EOF
listeners=PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CPORT
advertised.listeners=PLAINTEXT://$HOST:$PORT
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
EOF
    return
  fi
  cat <<EOF
listeners=SASL_SSL://$HOST:$PORT,CONTROLLER://$HOST:$CPORT
advertised.listeners=SASL_SSL://$HOST:$PORT
inter.broker.listener.name=SASL_SSL
listener.security.protocol.map=CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-512
sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="broker" password="$(cat "$SCRAM/broker")";
ssl.keystore.type=PEM
ssl.keystore.location=$TLS/node$NODE.pem
ssl.truststore.type=PEM
ssl.truststore.location=$TLS/ca.pem
ssl.client.auth=none
EOF
}

# make_secrets: the CA, node certificates (for 127.0.0.1 and localhost) and
# SCRAM passwords of a secure run dir, once.
make_secrets() {
  [ "$SECURE" = 1 ] || return 0
  command -v openssl >/dev/null || die "kafka: KAFKA_SECURE=1 needs openssl"
  mkdir -p "$TLS" "$SCRAM"
  chmod 700 "$TLS" "$SCRAM"
  local u i
  for u in "$SCRAM_USER" broker; do
    [ -s "$SCRAM/$u" ] || (umask 077 && openssl rand -hex 16 >"$SCRAM/$u")
  done
  if [ ! -s "$TLS/ca.pem" ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=asyncwebrl local CA" \
      -keyout "$TLS/ca.key" -out "$TLS/ca.pem" >/dev/null 2>&1 || die "kafka: could not make the CA"
  fi
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$TLS/san.ext"
  for ((i = 1; i <= NODES; i++)); do
    [ -s "$TLS/node$i.pem" ] && continue
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$TLS/node$i.key" -out "$TLS/node$i.csr" >/dev/null 2>&1 \
      || die "kafka: could not make node $i's key"
    openssl x509 -req -in "$TLS/node$i.csr" -CA "$TLS/ca.pem" -CAkey "$TLS/ca.key" -CAcreateserial -days 3650 \
      -extfile "$TLS/san.ext" -out "$TLS/node$i.crt" >/dev/null 2>&1 || die "kafka: could not sign node $i's certificate"
    # Kafka's PEM key store: the unencrypted PKCS#8 key, then the chain.
    (umask 077 && cat "$TLS/node$i.key" "$TLS/node$i.crt" "$TLS/ca.pem" >"$TLS/node$i.pem")
  done
}

# cmd_credentials: the flags a client of the secure listener needs; the
# password goes by its environment variable, never a flag (ps shows flags).
cmd_credentials() {
  [ "$SECURE" = 1 ] || die "kafka: $KDIR is not a secure (KAFKA_SECURE=1) run dir"
  echo "-brokers=$(brokers) -kafka-sasl-mechanism=scram-sha-512 -kafka-sasl-user=$SCRAM_USER -kafka-tls -kafka-tls-ca=$TLS/ca.pem"
  echo "export ASYNCWEBRL_KAFKA_SASL_PASSWORD=\$(cat $SCRAM/$SCRAM_USER)"
}

write_config() {
  local RF=$((NODES < 3 ? NODES : 3)) MIN_ISR=$((NODES < 3 ? 1 : 2))
  mkdir -p "$NDIR"
  cat >"$PROPS" <<EOF
# Generated by infra/kafka.sh on every start; edits are overwritten.
process.roles=broker,controller
node.id=$NODE
# Static voters (not a dynamic quorum): the controller addresses are read from
# this file on each start, so changing KAFKA_CONTROLLER_PORT needs no re-format.
controller.quorum.voters=$(voters)
$(listeners)
controller.listener.names=CONTROLLER
log.dirs=$DATA

# Replication follows the cluster: a single node cannot meet the defaults
# (RF 3, min.isr 2), which would leave the internal topics unavailable; three
# or more nodes use them, so one node may die with nothing lost. One
# partition each keeps the internal topics quick to create.
offsets.topic.replication.factor=$RF
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=$RF
transaction.state.log.min.isr=$MIN_ISR
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=$RF
share.coordinator.state.topic.min.isr=$MIN_ISR
group.initial.rebalance.delay.ms=0

# Topics are created by our own admin code with explicit partitions/configs;
# auto-creation would hide a missing topic behind a 1-partition default.
auto.create.topics.enable=false
num.partitions=1
default.replication.factor=$RF
min.insync.replicas=$MIN_ISR
EOF

  # Rolling file so a long-lived broker cannot fill the disk; request and
  # state-change chatter is kept at WARN.
  cat >"$LOG4J" <<EOF
status = warn
appender.file.type = RollingFile
appender.file.name = FILE
appender.file.fileName = $LOGFILE
appender.file.filePattern = $LOGFILE.%i
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
appender.file.policies.type = Policies
appender.file.policies.size.type = SizeBasedTriggeringPolicy
appender.file.policies.size.size = 100MB
appender.file.strategy.type = DefaultRolloverStrategy
appender.file.strategy.max = 2
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
logger.zk.name = org.apache.zookeeper
logger.zk.level = WARN
EOF
}

format_storage() {
  [ -f "$DATA/meta.properties" ] && return 0
  local id
  if [ -s "$KDIR/cluster.id" ]; then
    id=$(cat "$KDIR/cluster.id")
  else
    id=$(java -cp "$LIBS/*" kafka.tools.StorageTool random-uuid 2>>"$OUTFILE" | tail -n 1)
    [ -n "$id" ] || die "kafka: could not generate a cluster id (see $OUTFILE)"
    echo "$id" >"$KDIR/cluster.id"
  fi
  log "kafka: formatting $DATA (cluster id $id)"
  mkdir -p "$DATA"
  local scram=()
  if [ "$SECURE" = 1 ]; then
    scram=(--add-scram "SCRAM-SHA-512=[name=$SCRAM_USER,password=$(cat "$SCRAM/$SCRAM_USER")]"
      --add-scram "SCRAM-SHA-512=[name=broker,password=$(cat "$SCRAM/broker")]")
  fi
  java -Dlog4j2.configurationFile="$LOG4J" -cp "$LIBS/*" kafka.tools.StorageTool \
    format -t "$id" -c "$PROPS" --ignore-formatted "${scram[@]}" >>"$OUTFILE" 2>&1 \
    || { tail -n 20 "$OUTFILE" >&2; die "kafka: storage format failed"; }
}

# started: the node's port is open AND this run's log says the server started.
started() { port_open "$HOST" "$PORT" && grep -q 'Kafka Server started' "$LOGFILE" 2>/dev/null; }

# wait_ready START_NS [adopt]: the node has started (await_ready). With
# adopt, a process that exits returns 2.
wait_ready() {
  await_ready "kafka: node $NODE" "$PIDFILE" "$READY_TIMEOUT" "$1" "${2:-}" started "$HOST:$PORT" "$LOGFILE" "$OUTFILE"
}

# launch_node: start the current node's JVM without waiting for it.
launch_node() {
  rm -f "$PIDFILE"
  local p
  for p in "$PORT" "$CPORT"; do
    port_open "$HOST" "$p" && die "kafka: $HOST:$p is taken by another process (set KAFKA_PORT/KAFKA_CONTROLLER_PORT)"
  done
  mkdir -p "$NDIR" "$DATA"
  write_config
  rotate_log "$LOGFILE"
  rotate_log "$OUTFILE"
  format_storage
  log "kafka: starting node $NODE on $HOST:$PORT (controller :$CPORT, heap $KAFKA_HEAP${EXEC[*]:+, in ${EXEC[*]: -1}})"
  # shellcheck disable=SC2086 # KAFKA_HEAP may hold several JVM flags; it comes after -Xms so it can override it.
  # jdk.nio.maxCachedBufferSize: the JDK copies a heap buffer through a
  # temporary direct one on every socket and file I/O, and by default each
  # thread keeps the largest it ever used. The language model's weights are
  # ~26 MB records: each network and I/O thread that touched one kept 26 MB
  # of direct memory, until the 640 MB direct limit (the heap's) was gone
  # 23 minutes into an hour (12-06: "Cannot reserve 26231483 bytes of direct
  # buffer memory", then i/o timeouts on every client). Buffers above 1 MiB
  # are now freed after use.
  launch "$PIDFILE" "$OUTFILE" "${EXEC[@]}" java -Xms128M $KAFKA_HEAP -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true -Djdk.nio.maxCachedBufferSize=1048576 \
    -Dlog4j2.configurationFile="$LOG4J" -Dkafka.logs.dir="$NDIR" \
    -cp "$LIBS/*" kafka.Kafka "$PROPS"
}

# stray_running: a node this run dir started with another node count is up
# (a single node's files are in $KDIR, a cluster's in $KDIR/node<I>): the
# new layout would fight it for its ports and the remembered count.
stray_running() {
  local f i
  if [ "$NODES" -gt 1 ] && pid_alive "$KDIR/kafka.pid"; then return 0; fi
  for f in "$KDIR"/node*/kafka.pid; do
    [ -f "$f" ] || continue
    i=${f#"$KDIR"/node}
    i=${i%/kafka.pid}
    if { [ "$NODES" -eq 1 ] || [ "$i" -gt "$NODES" ]; } && pid_alive "$f"; then return 0; fi
  done
  return 1
}

all_running() {
  local i
  for ((i = 1; i <= NODES; i++)); do node "$i"; running || return 1; done
}

# cmd_start [NODE]: every node (or one), launched together (a quorum needs a
# majority of its voters up before any node reports started), then waited for.
cmd_start() {
  local only=${1:-} i start adopt=()
  if [ -z "$only" ] && all_running; then
    echo "$NODES" >"$KDIR/nodes"
    echo "kafka: already running on $(brokers)"
    return 0
  fi
  take_lock "$KDIR/.lock"
  if stray_running; then
    die "kafka: $KDIR runs a cluster of $(cat "$KDIR/nodes" 2>/dev/null || echo 1) node(s), not $NODES; stop it first (infra/kafka.sh stop, or KAFKA_NODES=N infra/kafka.sh stop) or use another ASYNCWEBRL_RUN_DIR"
  fi
  ls "$LIBS"/kafka_2.13-*.jar >/dev/null 2>&1 || die "kafka: no jars in $LIBS; run infra/setup.sh kafka"
  command -v java >/dev/null || die "kafka: java not found; run infra/setup.sh apt"
  mkdir -p "$KDIR"
  echo "$NODES" >"$KDIR/nodes"
  echo "$SECURE" >"$KDIR/secure"
  make_secrets
  start=$(date +%s%N)
  for ((i = 1; i <= NODES; i++)); do
    [ -n "$only" ] && [ "$i" != "$only" ] && continue
    node "$i"
    if running; then echo "kafka: node $i already running on $HOST:$PORT"; continue; fi
    if pid_alive "$PIDFILE"; then
      # Up but not answering: still starting (an earlier start timed out)
      # or dying. Wait for it below; if it exits, start it afresh.
      log "kafka: node $i (pid $(cat "$PIDFILE")) is up but not ready, waiting"
    else
      launch_node
    fi
    adopt+=("$i")
  done
  for i in "${adopt[@]}"; do
    node "$i"
    if ! wait_ready "$start" adopt; then
      log "kafka: node $i exited before it was ready, starting it again"
      launch_node
      wait_ready "$start"
    fi
  done
}

cmd_stop() {
  take_lock "$KDIR/.lock"
  local i
  # SIGTERM to every node first: one by one, the last nodes would wait for
  # a quorum that the first ones took away.
  for ((i = 1; i <= NODES; i++)); do
    node "$i"
    pid_alive "$PIDFILE" && kill "$(cat "$PIDFILE")" 2>/dev/null || true
  done
  for ((i = 1; i <= NODES; i++)); do node "$i"; stop_pid "$PIDFILE" "kafka node $i"; done
}

# cmd_kill NODE: SIGKILL, as a crash would; waits until the process is gone.
cmd_kill() {
  node "${1:-}"
  pid_alive "$PIDFILE" || die "kafka: node $NODE is not running"
  local pid
  pid=$(cat "$PIDFILE")
  kill -9 "$pid"
  while pid_running "$pid"; do sleep 0.05; done
  log "kafka: node $NODE (pid $pid) killed with SIGKILL"
}

cmd_status() {
  local i rc=0
  for ((i = 1; i <= NODES; i++)); do
    node "$i"
    if ! pid_alive "$PIDFILE"; then
      echo "kafka: node $i stopped"; rc=3
    elif port_open "$HOST" "$PORT"; then
      echo "kafka: node $i running (pid $(cat "$PIDFILE")) on $HOST:$PORT"
    else
      echo "kafka: node $i pid $(cat "$PIDFILE") alive but $HOST:$PORT not answering (starting or stuck)"
      [ "$rc" -eq 0 ] && rc=1
    fi
  done
  return $rc
}

# cmd_logs [-f|N] [NODE]: node NODE's log (node 1 by default).
cmd_logs() { node "${2:-1}"; show_log kafka "$LOGFILE" "${1:-}"; }

case "${1:-}" in
  start) cmd_start ;;
  start-node) cmd_start "${2:?usage: $0 start-node NODE}" ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  brokers) brokers ;;
  kill) cmd_kill "${2:-}" ;;
  logs) shift; cmd_logs "$@" ;;
  credentials) cmd_credentials ;;
  *) echo "usage: $0 {start|stop|status|brokers|kill NODE|start-node NODE|logs [-f|N] [NODE]|credentials}" >&2; exit 2 ;;
esac
