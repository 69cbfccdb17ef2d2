#!/usr/bin/env bash
# A local plinth cluster in one directory: 3 etcd members (one real cluster, TLS for peers and
# clients with client-certificate auth), 3 plinth-apiserver replicas that share nothing but etcd,
# and haproxy in front (TCP passthrough, /readyz health checks), all on free loopback ports.
#
#   cluster.sh up DIR [-- <extra plinth-apiserver flags>]   start (or restart) and wait until ready
#   cluster.sh down DIR                                      stop everything; the data stays in DIR
#   cluster.sh status DIR                                    what runs, and whether it is healthy
#   cluster.sh stop-apiserver DIR N [SIGNAL]                 N = 0,1,2; default TERM; waits for exit
#   cluster.sh start-apiserver DIR N                         waits for /readyz and haproxy's UP
#   cluster.sh stop-etcd DIR N | start-etcd DIR N            one member; start waits until it answers
#
# See deploy/README.md. Requires etcd, haproxy, openssl and node (`make deps` installs them).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
PLINTH=$REPO/packages/apiserver/bin/plinth-apiserver
HELPER=$HERE/helper.mjs
NODE=${NODE:-node}
# Debian installs haproxy in /usr/sbin, which is not on a normal user's PATH.
HAPROXY=${HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}
MEMBERS=(0 1 2)
# Overridable through the environment (seconds).
READY_TIMEOUT=${CLUSTER_READY_TIMEOUT:-120}
STOP_TIMEOUT=${CLUSTER_STOP_TIMEOUT:-20}
# What each replica gets unless the extra flags say otherwise (they come later and win): /readyz
# fails this long before a replica stops serving, longer than haproxy needs to drain it
# (fall 2 x inter 500ms).
SHUTDOWN_DELAY=3s

DIR=
STARTED=()
UP_OK=0

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

usage() {
  sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

need() {
  local c
  for c; do
    command -v "$c" >/dev/null 2>&1 || die "$c is not installed (run 'make deps')"
  done
}

# private_dir PATH...: created 0700 when missing (parents as umask says).
private_dir() {
  local d
  for d; do
    [[ -d $d ]] && continue
    mkdir -p "$(dirname "$d")"
    mkdir -m 0700 "$d"
  done
}

pidfile() { echo "$DIR/run/$1.pid"; }
logfile() { echo "$DIR/logs/$1.log"; }

# is_ours PID: the process runs (not a zombie) and its command line names DIR.
is_ours() {
  local pid=$1 stat state cmd
  [[ -r /proc/$pid/stat ]] || return 1
  stat=$(<"/proc/$pid/stat") 2>/dev/null || return 1
  state=${stat##*) }
  state=${state%% *}
  [[ $state != Z && $state != X ]] || return 1
  cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || return 1
  [[ $cmd == *"$DIR/"* || $cmd == *"$DIR "* ]]
}

# running_pid NAME: prints the pid of component NAME when it runs.
running_pid() {
  local f pid
  f=$(pidfile "$1")
  [[ -f $f ]] || return 1
  pid=$(<"$f")
  [[ $pid =~ ^[0-9]+$ ]] && is_ours "$pid" && echo "$pid"
}

# stop_pids SIGNAL PID...: signals them, waits STOP_TIMEOUT, then KILLs what is left and waits.
stop_pids() {
  local sig=$1 pid left deadline killed=0
  shift
  for pid; do kill "-$sig" "$pid" 2>/dev/null || true; done
  deadline=$((SECONDS + STOP_TIMEOUT))
  while :; do
    left=()
    for pid; do if is_ours "$pid"; then left+=("$pid"); fi; done
    ((${#left[@]})) || return 0
    if ((SECONDS >= deadline)); then
      ((killed)) && die "processes ${left[*]} survive SIGKILL"
      echo "cluster.sh: still running after ${STOP_TIMEOUT}s, killing: ${left[*]}" >&2
      kill -KILL "${left[@]}" 2>/dev/null || true
      killed=1
      deadline=$((SECONDS + 10))
    fi
    sleep 0.1
  done
}

# stop_named SIGNAL NAME...: stops those components (in parallel) and forgets their pids.
stop_named() {
  local sig=$1 n pid pids=()
  shift
  for n; do
    if pid=$(running_pid "$n"); then pids+=("$pid"); fi
  done
  if ((${#pids[@]})); then stop_pids "$sig" "${pids[@]}"; fi
  for n; do rm -f "$(pidfile "$n")"; done
}

# spawn NAME CMD...: starts CMD in its own session, output appended to logs/NAME.log.
spawn() {
  local name=$1 log
  shift
  log=$(logfile "$name")
  printf '\n==== %s starting: %s\n' "$(date -u +%FT%TZ)" "$*" >>"$log"
  setsid "$@" >>"$log" 2>&1 </dev/null &
  echo $! >"$(pidfile "$name")"
  STARTED+=("$name")
}

load_ports() {
  [[ -f $DIR/ports.env ]] || die "$DIR has no cluster (run 'cluster.sh up $DIR' first)"
  # shellcheck disable=SC1091
  source "$DIR/ports.env"
  ETCD_SERVERS=
  local i
  for i in "${MEMBERS[@]}"; do
    local c="ETCD_CLIENT_$i"
    ETCD_SERVERS+="${ETCD_SERVERS:+,}https://127.0.0.1:${!c}"
  done
}

# Ports: chosen once and kept, so kubeconfigs and etcd's membership (peer URLs are recorded in
# the members' data) stay valid across down/up. An apiserver or haproxy port that another program
# took meanwhile is replaced; an etcd port cannot be.
choose_ports() {
  local keys=() k i busy
  for i in "${MEMBERS[@]}"; do keys+=("ETCD_CLIENT_$i" "ETCD_PEER_$i"); done
  for i in "${MEMBERS[@]}"; do keys+=("APISERVER_$i"); done
  keys+=(LB LB_STATS)
  if [[ ! -f $DIR/ports.env ]]; then
    local ports
    mapfile -t ports < <("$NODE" "$HELPER" free-ports "${#keys[@]}")
    ((${#ports[@]} == ${#keys[@]})) || die "could not find free ports"
    : >"$DIR/ports.env"
    for i in "${!keys[@]}"; do echo "${keys[$i]}=${ports[$i]}" >>"$DIR/ports.env"; done
    return
  fi
  # shellcheck disable=SC1091
  source "$DIR/ports.env"
  local all=()
  for k in "${keys[@]}"; do all+=("${!k}"); done
  busy=$("$NODE" "$HELPER" busy-ports "${all[@]}") || true
  [[ -z $busy ]] && return
  local replaced=0
  for k in "${keys[@]}"; do
    if [[ " $busy " == *" ${!k} "* ]]; then
      [[ $k == ETCD_* ]] && die "etcd port ${!k} ($k) recorded in $DIR/ports.env is taken by another program; free it, or start over with a new DIR"
      local p
      p=$("$NODE" "$HELPER" free-ports 1)
      echo "cluster.sh: port ${!k} ($k) is taken; using $p" >&2
      sed -i "s/^$k=.*/$k=$p/" "$DIR/ports.env"
      replaced=1
    fi
  done
  ((replaced)) || true
}

# ---- certificates and secrets, generated once (keys 0600) --------------------------------------

openssl_cfg() {
  cat >"$1" <<'EOF'
[req]
distinguished_name = dn
prompt = no
[dn]
CN = unused
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign,digitalSignature
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,IP:::1,DNS:localhost
[peer]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth,clientAuth
subjectAltName = IP:127.0.0.1,IP:::1,DNS:localhost
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
EOF
}

ec_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

make_ca() { # NAME CN
  local pki=$DIR/pki
  [[ -f $pki/$1.crt ]] && return
  ec_key "$pki/$1.key"
  openssl req -x509 -new -key "$pki/$1.key" -sha256 -days 3650 -subj "/CN=$2" \
    -config "$pki/openssl.cnf" -extensions ca -out "$pki/$1.crt"
}

make_cert() { # CA NAME CN PROFILE
  local pki=$DIR/pki
  [[ -f $pki/$2.crt ]] && return
  ec_key "$pki/$2.key"
  openssl req -new -key "$pki/$2.key" -subj "/CN=$3" -config "$pki/openssl.cnf" -out "$pki/$2.csr"
  openssl x509 -req -in "$pki/$2.csr" -CA "$pki/$1.crt" -CAkey "$pki/$1.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days 825 -sha256 \
    -extfile "$pki/openssl.cnf" -extensions "$4" -out "$pki/$2.crt" 2>/dev/null
  rm -f "$pki/$2.csr"
}

gen_pki() {
  local pki=$DIR/pki i
  private_dir "$pki"
  (
    umask 077
    openssl_cfg "$pki/openssl.cnf"
    make_ca etcd-ca "plinth-local etcd CA"
    for i in "${MEMBERS[@]}"; do make_cert etcd-ca "etcd-$i" "etcd-$i" peer; done
    make_cert etcd-ca etcd-client plinth-apiserver client
    make_ca ca "plinth-local CA"
    make_cert ca apiserver plinth-apiserver server
    if [[ ! -f $pki/sa.key ]]; then
      openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$pki/sa.key" 2>/dev/null
      openssl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub"
    fi
    if [[ ! -s $DIR/admin-token ]]; then
      openssl rand -base64 32 | tr '+/' '-_' | tr -d '=\n' >"$DIR/admin-token"
      echo >>"$DIR/admin-token"
    fi
  )
  chmod 0600 "$pki"/*.key "$DIR/admin-token"
}

# ---- components ----------------------------------------------------------------------------------

etcd_tls() { # the client TLS flags of the helper for etcd
  echo --ca "$DIR/pki/etcd-ca.crt" --cert "$DIR/pki/etcd-client.crt" --key "$DIR/pki/etcd-client.key"
}

start_etcd() {
  local i=$1 cluster="" j p c
  for j in "${MEMBERS[@]}"; do
    p="ETCD_PEER_$j"
    cluster+="${cluster:+,}etcd-$j=https://127.0.0.1:${!p}"
  done
  p="ETCD_PEER_$i"
  c="ETCD_CLIENT_$i"
  private_dir "$DIR/etcd-$i"
  spawn "etcd-$i" etcd --name "etcd-$i" --data-dir "$DIR/etcd-$i" \
    --listen-client-urls "https://127.0.0.1:${!c}" --advertise-client-urls "https://127.0.0.1:${!c}" \
    --listen-peer-urls "https://127.0.0.1:${!p}" --initial-advertise-peer-urls "https://127.0.0.1:${!p}" \
    --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token plinth-local \
    --cert-file "$DIR/pki/etcd-$i.crt" --key-file "$DIR/pki/etcd-$i.key" \
    --trusted-ca-file "$DIR/pki/etcd-ca.crt" --client-cert-auth \
    --peer-cert-file "$DIR/pki/etcd-$i.crt" --peer-key-file "$DIR/pki/etcd-$i.key" \
    --peer-trusted-ca-file "$DIR/pki/etcd-ca.crt" --peer-client-cert-auth \
    --logger zap --log-outputs stderr
}

# stop_etcd_members: followers one by one, the leader last. A leader told to stop while its peers
# are stopping too tries to hand over leadership and waits for that to time out (~7 s).
stop_etcd_members() {
  local i leader=() others=()
  for i in "${MEMBERS[@]}"; do
    running_pid "etcd-$i" >/dev/null || continue
    # shellcheck disable=SC2046
    if "$NODE" "$HELPER" probe --match '^etcd_server_is_leader 1' $(etcd_tls) "$(etcd_url "$i")/metrics" >/dev/null 2>&1; then
      leader+=("etcd-$i")
    else
      others+=("etcd-$i")
    fi
  done
  for i in "${others[@]}" "${leader[@]}"; do stop_named TERM "$i"; done
}

etcd_url() { local c="ETCD_CLIENT_$1"; echo "https://127.0.0.1:${!c}"; }
apiserver_url() { local a="APISERVER_$1"; echo "https://127.0.0.1:${!a}"; }

start_apiserver() {
  local i=$1 a="APISERVER_$1" extra=()
  if [[ -f $DIR/apiserver-args ]]; then mapfile -t extra <"$DIR/apiserver-args"; fi
  private_dir "$DIR/apiserver-$i"
  # The shared admin token: plinth takes a data dir's admin-token as the system:masters token.
  install -m 0600 "$DIR/admin-token" "$DIR/apiserver-$i/admin-token"
  spawn "apiserver-$i" "$NODE" "$PLINTH" --secure-port="${!a}" --bind-address=127.0.0.1 \
    --data-dir="$DIR/apiserver-$i" --etcd-servers="$ETCD_SERVERS" \
    --etcd-cafile="$DIR/pki/etcd-ca.crt" --etcd-certfile="$DIR/pki/etcd-client.crt" \
    --etcd-keyfile="$DIR/pki/etcd-client.key" \
    --tls-cert-file="$DIR/pki/apiserver.crt" --tls-private-key-file="$DIR/pki/apiserver.key" \
    --service-account-signing-key-file="$DIR/pki/sa.key" --service-account-key-file="$DIR/pki/sa.pub" \
    --shutdown-delay-duration="$SHUTDOWN_DELAY" "${extra[@]}"
}

write_haproxy_cfg() {
  local i a
  {
    cat <<EOF
# Generated by cluster.sh on each 'up'. TCP passthrough: TLS ends at the replicas.
global
    log stdout format raw local0 info
    maxconn 4096

defaults
    mode tcp
    log global
    option dontlognull
    timeout connect 2s
    timeout client 1h
    timeout server 1h
    # Watches are long-lived: never cut an established tunnel for idleness.
    timeout tunnel 24h
    timeout client-fin 5s
    # A connection refused by a dead replica is retried on another one.
    retries 2
    option redispatch 1

frontend apiserver
    bind 127.0.0.1:${LB}
    default_backend apiservers

backend apiservers
    balance roundrobin
    option httpchk
    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host localhost
    http-check expect status 200
    default-server check check-ssl verify none inter 500ms fastinter 250ms downinter 500ms fall 2 rise 2
EOF
    for i in "${MEMBERS[@]}"; do
      a="APISERVER_$i"
      echo "    server apiserver-$i 127.0.0.1:${!a}"
    done
    cat <<EOF

# Read-only state of the backends (plain HTTP, loopback): /stats;csv
listen stats
    mode http
    bind 127.0.0.1:${LB_STATS}
    stats enable
    stats uri /stats
    stats refresh 5s
EOF
  } >"$DIR/haproxy.cfg"
}

# backend_state N: haproxy's status of replica N (UP, DOWN, "UP 1/2", ...), empty when unknown.
backend_state() {
  "$NODE" -e '
    const http = require("node:http");
    http.get(process.argv[1], (r) => { let b = ""; r.on("data", (c) => (b += c)); r.on("end", () => {
      for (const l of b.split("\n")) { const f = l.split(","); if (f[0] === "apiservers" && f[1] === process.argv[2]) console.log(f[17]); }
    }); }).on("error", () => {});' "http://127.0.0.1:${LB_STATS}/stats;csv" "apiserver-$1" 2>/dev/null || true
}

# wait_backend_up N: haproxy sends traffic to replica N again (its checks passed `rise` times).
wait_backend_up() {
  local deadline=$((SECONDS + 15))
  running_pid haproxy >/dev/null || return 0
  until [[ $(backend_state "$1") == UP ]]; do
    ((SECONDS < deadline)) || die "haproxy does not see apiserver-$1 as UP (state: $(backend_state "$1"))"
    sleep 0.2
  done
}

wait_etcd() { # members...: each answers, then each reports a healthy cluster
  local urls=() i
  local names=()
  for i; do
    urls+=("$(etcd_url "$i")/version")
    names+=("etcd-$i")
  done
  # shellcheck disable=SC2046
  "$NODE" "$HELPER" wait --any --timeout "$READY_TIMEOUT" --pids "$(pids_of "${names[@]}")" $(etcd_tls) "${urls[@]}" || return 1
  urls=()
  for i; do urls+=("$(etcd_url "$i")/health"); done
  # shellcheck disable=SC2046
  "$NODE" "$HELPER" wait --timeout "$READY_TIMEOUT" $(etcd_tls) "${urls[@]}"
}

# pids_of NAME...: the pids of those components, comma separated (for the helper's --pids).
pids_of() {
  local n pids=()
  for n; do pids+=("$(cat "$(pidfile "$n")" 2>/dev/null)"); done
  local IFS=,
  echo "${pids[*]}"
}

wait_apiservers() {
  local urls=() names=() i
  for i; do
    urls+=("$(apiserver_url "$i")/readyz")
    names+=("apiserver-$i")
  done
  "$NODE" "$HELPER" wait --timeout "$READY_TIMEOUT" --pids "$(pids_of "${names[@]}")" --ca "$DIR/pki/ca.crt" "${urls[@]}"
}

# show_logs NAME...: of each log's last run, the error lines and the last lines.
show_logs() {
  local n log from
  for n; do
    log=$(logfile "$n")
    [[ -f $log ]] || continue
    from=$(grep -n '^==== ' "$log" | tail -n 1 | cut -d: -f1)
    echo "---- $log: errors, then the last lines" >&2
    tail -n "+${from:-1}" "$log" | grep -iE -m 10 'error|fatal|panic' >&2 || true
    echo "  ..." >&2
    tail -n "+${from:-1}" "$log" | tail -n 12 >&2
  done
}

# On a failed 'up': show the logs, and stop what this run started.
on_exit() {
  local rc=$?
  if ((UP_OK == 0 && ${#STARTED[@]})); then
    show_logs "${STARTED[@]}"
    echo "cluster.sh: failed; stopping what it started" >&2
    local n etcds=() others=()
    for n in "${STARTED[@]}"; do
      if [[ $n == etcd-* ]]; then etcds+=("$n"); else others+=("$n"); fi
    done
    if ((${#others[@]})); then STOP_TIMEOUT=5 stop_named TERM "${others[@]}"; fi
    if ((${#etcds[@]} > 1)); then
      stop_etcd_members
    elif ((${#etcds[@]})); then
      stop_named TERM "${etcds[@]}"
    fi
    ((rc)) || rc=1
  fi
  exit "$rc"
}

all_names() {
  local i
  for i in "${MEMBERS[@]}"; do echo "etcd-$i"; done
  for i in "${MEMBERS[@]}"; do echo "apiserver-$i"; done
  echo haproxy
}

running_names() {
  local n
  for n in $(all_names); do
    if running_pid "$n" >/dev/null; then echo "$n"; fi
  done
}

set_dir() {
  [[ -n ${1:-} ]] || usage
  if [[ $2 == create ]]; then private_dir "$1"; fi
  [[ -d $1 ]] || die "no such directory: $1"
  DIR=$(cd "$1" && pwd)
}

member_arg() {
  [[ ${1:-} =~ ^[012]$ ]] || die "N must be 0, 1 or 2 (got '${1:-}')"
}

# ---- commands ------------------------------------------------------------------------------------

cmd_up() {
  set_dir "${1:-}" create
  shift
  if (($#)); then
    [[ $1 == -- ]] || usage
    shift
    printf '%s\n' "$@" | grep -v '^$' >"$DIR/apiserver-args" || true
  fi
  need etcd "$HAPROXY" openssl "$NODE" setsid
  [[ -f $REPO/packages/apiserver/dist/main.js ]] || die "plinth is not built (run 'make build')"
  local running
  running=$(running_names | paste -sd ' ')
  [[ -z $running ]] || die "$DIR already has a running cluster ($running); run 'cluster.sh down $DIR' first"
  private_dir "$DIR/run" "$DIR/logs"
  rm -f "$DIR"/run/*.pid
  local t0=$SECONDS i
  trap on_exit EXIT
  gen_pki
  choose_ports
  load_ports
  for i in "${MEMBERS[@]}"; do start_etcd "$i"; done
  wait_etcd "${MEMBERS[@]}" || die "the etcd cluster did not become healthy within ${READY_TIMEOUT}s"
  for i in "${MEMBERS[@]}"; do start_apiserver "$i"; done
  wait_apiservers "${MEMBERS[@]}" || die "the apiservers did not become ready within ${READY_TIMEOUT}s"
  write_haproxy_cfg
  "$HAPROXY" -c -q -f "$DIR/haproxy.cfg" || die "haproxy rejects $DIR/haproxy.cfg"
  spawn haproxy "$HAPROXY" -db -f "$DIR/haproxy.cfg"
  "$NODE" "$HELPER" wait --timeout 30 --ca "$DIR/pki/ca.crt" "https://127.0.0.1:${LB}/readyz" ||
    die "haproxy does not forward to the apiservers"
  for i in "${MEMBERS[@]}"; do wait_backend_up "$i"; done
  "$NODE" "$HELPER" write-state "$DIR"
  UP_OK=1
  echo "cluster up in $((SECONDS - t0))s: https://127.0.0.1:${LB} (haproxy) -> 3 apiservers -> 3 etcd members"
  echo "  export KUBECONFIG=$DIR/kubeconfig"
}

cmd_down() {
  set_dir "${1:-}" existing
  # The load balancer first (no new requests), then the replicas (they drain), then etcd.
  stop_named TERM haproxy
  stop_named TERM apiserver-0 apiserver-1 apiserver-2
  if [[ -f $DIR/ports.env ]]; then
    load_ports
    stop_etcd_members
    "$NODE" "$HELPER" write-state "$DIR" 2>/dev/null || true
  else
    stop_named TERM etcd-0 etcd-1 etcd-2
  fi
  echo "cluster in $DIR is down (data kept; 'cluster.sh up $DIR' restarts it)"
}

cmd_stop_apiserver() {
  set_dir "${1:-}" existing
  member_arg "${2:-}"
  local sig=${3:-TERM}
  sig=${sig#SIG}
  load_ports
  running_pid "apiserver-$2" >/dev/null || echo "cluster.sh: apiserver-$2 is not running" >&2
  stop_named "$sig" "apiserver-$2"
  "$NODE" "$HELPER" write-state "$DIR"
}

cmd_start_apiserver() {
  set_dir "${1:-}" existing
  member_arg "${2:-}"
  load_ports
  running_pid "apiserver-$2" >/dev/null && die "apiserver-$2 already runs"
  local busy
  busy=$("$NODE" "$HELPER" busy-ports "$(apiserver_url "$2" | sed 's/.*://')") || true
  [[ -z $busy ]] || die "port $busy of apiserver-$2 is taken"
  trap on_exit EXIT
  start_apiserver "$2"
  wait_apiservers "$2" || die "apiserver-$2 did not become ready within ${READY_TIMEOUT}s"
  wait_backend_up "$2"
  "$NODE" "$HELPER" write-state "$DIR"
  UP_OK=1
}

cmd_stop_etcd() {
  set_dir "${1:-}" existing
  member_arg "${2:-}"
  load_ports
  running_pid "etcd-$2" >/dev/null || echo "cluster.sh: etcd-$2 is not running" >&2
  stop_named TERM "etcd-$2"
  "$NODE" "$HELPER" write-state "$DIR"
}

cmd_start_etcd() {
  set_dir "${1:-}" existing
  member_arg "${2:-}"
  load_ports
  running_pid "etcd-$2" >/dev/null && die "etcd-$2 already runs"
  trap on_exit EXIT
  start_etcd "$2"
  # The member answers (it serves once the cluster has quorum again; without quorum it cannot).
  # shellcheck disable=SC2046
  "$NODE" "$HELPER" wait --any --timeout "$READY_TIMEOUT" $(etcd_tls) "$(etcd_url "$2")/version" ||
    die "etcd-$2 does not answer"
  # shellcheck disable=SC2046
  "$NODE" "$HELPER" wait --timeout 10 $(etcd_tls) "$(etcd_url "$2")/health" 2>/dev/null ||
    echo "cluster.sh: etcd-$2 runs but the cluster has no quorum yet" >&2
  "$NODE" "$HELPER" write-state "$DIR"
  UP_OK=1
}

cmd_status() {
  set_dir "${1:-}" existing
  load_ports
  local i pid health
  printf '%-12s %-8s %-28s %s\n' COMPONENT PID URL HEALTH
  for i in "${MEMBERS[@]}"; do
    pid=$(running_pid "etcd-$i") || pid=-
    # shellcheck disable=SC2046
    health=$("$NODE" "$HELPER" probe $(etcd_tls) "$(etcd_url "$i")/health") || true
    printf '%-12s %-8s %-28s %s\n' "etcd-$i" "$pid" "$(etcd_url "$i")" "$health"
  done
  for i in "${MEMBERS[@]}"; do
    pid=$(running_pid "apiserver-$i") || pid=-
    health=$("$NODE" "$HELPER" probe --ca "$DIR/pki/ca.crt" "$(apiserver_url "$i")/readyz") || true
    printf '%-12s %-8s %-28s %s (haproxy: %s)\n' "apiserver-$i" "$pid" "$(apiserver_url "$i")" "/readyz $health" "$(backend_state "$i")"
  done
  pid=$(running_pid haproxy) || pid=-
  health=$("$NODE" "$HELPER" probe --ca "$DIR/pki/ca.crt" "https://127.0.0.1:${LB}/readyz") || true
  printf '%-12s %-8s %-28s %s\n' haproxy "$pid" "https://127.0.0.1:${LB}" "/readyz $health"
  echo "kubeconfig: $DIR/kubeconfig   logs: $DIR/logs/   haproxy stats: http://127.0.0.1:${LB_STATS}/stats"
}

main() {
  local cmd=${1:-}
  (($#)) && shift
  case $cmd in
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    stop-apiserver) cmd_stop_apiserver "$@" ;;
    start-apiserver) cmd_start_apiserver "$@" ;;
    stop-etcd) cmd_stop_etcd "$@" ;;
    start-etcd) cmd_start_etcd "$@" ;;
    *) usage ;;
  esac
}

main "$@"
