#!/bin/bash
# A simulated cluster on one machine: N nodes x M slots, each node a network namespace with its
# own eth0 and hostname, joined by a bridge, for Open MPI runs across "nodes". Sourced by tests
# (README.md beside this file); also a CLI: cluster.sh demo | can-run | reap.
# Namespaces are slc-<owner pid>-<4 hex>-<sw|nI>: the owner's pid (and its start time, in
# /run/slimtrain-cluster/<id>) lets a watchdog or a later run remove what a killed run left.
# Nothing here touches a namespace or link whose name lacks such a run id.

_cluster_lib=$(readlink -f "${BASH_SOURCE[0]}")
_cluster_registry=/run/slimtrain-cluster
_cluster_id=        # the run this shell owns (empty: none); CLUSTER_RUN_ID is for children
_cluster_traps=     # set once this shell's traps call cluster_down
_cluster_bg=        # the command cluster_exec is waiting for
# Benchmarking range (RFC 2544), never routed. Every run has its own switch, so runs can share it.
_cluster_net=198.18.0

_cluster_python() { if [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; else command -v python3; fi; }

# cluster_can_run: 0 if a cluster can be built here, else the reason on stdout and 1.
cluster_can_run() {
  local tool probe err rc
  [ "$EUID" -eq 0 ] || { echo "not root: network namespaces need CAP_NET_ADMIN and CAP_SYS_ADMIN"; return 1; }
  for tool in ip tc unshare setsid hostname mpirun; do
    command -v "$tool" >/dev/null || { echo "$tool not found"; return 1; }
  done
  [ -n "$(_cluster_python)" ] || { echo "python3 not found (the network probes use it)"; return 1; }
  # Named like a run, so a probe left by a killed shell is reaped like one.
  probe=slc-$BASHPID-$(printf %04x $RANDOM)-probe
  err=$(ip netns add "$probe" 2>&1) || { echo "cannot create a network namespace: $err"; return 1; }
  rc=0
  err=$({ ip -n "$probe" link add name va type veth peer name vb && ip -n "$probe" link add name br type bridge &&
          ip -n "$probe" link set va master br && tc -n "$probe" qdisc add dev va root tbf rate 1mbit \
          burst 32k latency 10ms && unshare --uts true; } 2>&1) || rc=$?
  ip netns delete "$probe"
  [ "$rc" -eq 0 ] || { echo "namespaces work but veth, bridge, tbf or unshare --uts do not: $err"; return 1; }
}

# cluster_up NODES SLOTS: builds the cluster, exports CLUSTER_* and installs the teardown traps.
cluster_up() {
  local nodes=${1:-} slots=${2:-}
  if ! [[ $nodes =~ ^[1-9][0-9]?$ && $slots =~ ^[1-9][0-9]{0,2}$ ]]; then
    echo "usage: cluster_up NODES(1-99) SLOTS(1-999)" >&2; return 2
  fi
  [ -z "$_cluster_id" ] || { echo "cluster_up: run $_cluster_id is still up; cluster_down first" >&2; return 2; }
  cluster_reap
  _cluster_traps_install
  # pid_max is at most 4194304 (7 digits): "<id>-br" and "<id>-99" stay within 15 characters.
  local owner=$BASHPID  # this shell; $$ would name the parent of a ( subshell )
  _cluster_id=$owner-$(printf %04x $RANDOM)
  mkdir -p "$_cluster_registry"
  CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/slc-$_cluster_id.XXXXXX") || { _cluster_id=; return 1; }
  printf '%s\n%s\n' "$(_cluster_starttime "$owner")" "$CLUSTER_DIR" >"$_cluster_registry/$_cluster_id"
  # The watchdog removes the run if this shell dies without its traps (SIGKILL, a CTest timeout).
  # Detached and off our stdout, so neither a process-tree kill nor CTest's pipe waits for it.
  [ -n "${CLUSTER_NO_WATCHDOG:-}" ] ||
    (setsid bash "$_cluster_lib" watch "$_cluster_id" </dev/null >/dev/null 2>&1 &)
  export CLUSTER_RUN_ID=$_cluster_id CLUSTER_DIR CLUSTER_NODES=$nodes CLUSTER_SLOTS=$slots
  export CLUSTER_SUBNET=$_cluster_net.0/24 CLUSTER_HOSTFILE=$CLUSTER_DIR/hostfile
  export CLUSTER_AGENT=$CLUSTER_DIR/agent
  if ! _cluster_build; then
    echo "cluster_up: bring-up failed; tearing down" >&2
    cluster_down
    return 1
  fi
}

_cluster_build() {
  local id=$_cluster_id i ns sw=slc-$_cluster_id-sw
  _cluster_ns_add "$sw" || return 1
  ip -n "$sw" link add name "$id-br" type bridge forward_delay 0 && ip -n "$sw" link set "$id-br" up || return 1
  : >"$CLUSTER_HOSTFILE"
  for ((i = 1; i <= CLUSTER_NODES; i++)); do
    ns=slc-$id-n$i
    _cluster_ns_add "$ns" || return 1
    # Both ends are created inside their namespaces: nothing ever appears in the host's.
    ip -n "$sw" link add name "$id-$i" type veth peer name eth0 netns "$ns" &&
      ip -n "$sw" link set "$id-$i" master "$id-br" up &&
      ip -n "$ns" addr add "$(cluster_addr "$i")/24" dev eth0 &&
      ip -n "$ns" link set eth0 up || return 1
    echo "$(cluster_addr "$i") slots=$CLUSTER_SLOTS" >>"$CLUSTER_HOSTFILE"
  done
  mkdir -p "$CLUSTER_DIR/tmp"
  _cluster_write_agent >"$CLUSTER_AGENT" && chmod 755 "$CLUSTER_AGENT"
}

_cluster_ns_add() {
  ip netns add "$1" && ip -n "$1" link set lo up || return 1
  # No IPv6: no duplicate-address waits, and Open MPI cannot wander onto link-local addresses.
  ip netns exec "$1" sh -c 'for f in all default; do echo 1 >/proc/sys/net/ipv6/conf/$f/disable_ipv6; done' \
    2>/dev/null || true
}

# The plm_rsh_agent. Open MPI 4.1.4 calls it like ssh: AGENT [ssh options] HOST WORD..., where
# the words (" orted", "-mca", "ess", "\"env\"", ...) carry shell quoting meant for the remote
# shell, so they are joined with spaces and parsed by sh, exactly as ssh and sshd would do.
_cluster_write_agent() {
  local i
  cat <<EOF
#!/bin/sh
# Open MPI launch agent for simulated cluster $_cluster_id (written by tests/cluster/cluster.sh).
while [ \$# -gt 0 ]; do
  case \$1 in
    --) shift; break ;;
    -[BbcDEeFIiJLlmOopQRSWw]) shift 2 ;;  # ssh options that take a separate value
    -*) shift ;;                          # flags (-x, -q, -T) and options with attached values
    *) break ;;
  esac
done
[ \$# -ge 2 ] || { echo "cluster agent: usage: AGENT [ssh options] HOST COMMAND..." >&2; exit 255; }
host=\${1#*@}
shift
case \$host in
EOF
  for ((i = 1; i <= CLUSTER_NODES; i++)); do
    echo "  $(cluster_addr "$i")|node$i) ns=slc-$_cluster_id-n$i name=node$i ;;"
  done
  cat <<'EOF'
  *) echo "cluster agent: $host is not a node of this cluster" >&2; exit 255 ;;
esac
# A fresh login environment, as sshd gives: what remote ranks need must come with mpirun -x.
# This shell stays on the caller's node, as ssh does, and says what ssh says when the remote
# side dies under it (a node's processes killed: the launcher's message then names the node).
set -- "$*"
ip netns exec "$ns" unshare --uts -- env -i ${PATH:+"PATH=$PATH"} ${HOME:+"HOME=$HOME"} \
  ${USER:+"USER=$USER"} ${LOGNAME:+"LOGNAME=$LOGNAME"} ${LANG:+"LANG=$LANG"} SHELL=/bin/sh \
  sh -c 'hostname "$0" && eval "$1"' "$name" "$1"
rc=$?
[ "$rc" -ge 128 ] && echo "Connection to $name closed by remote host." >&2
exit "$rc"
EOF
}

# cluster_addr NODE / cluster_ns NODE: the node's address, its namespace.
cluster_addr() { echo "$_cluster_net.$((10 + $1))"; }
cluster_ns() { echo "slc-$CLUSTER_RUN_ID-n$1"; }

_cluster_node_ok() {
  [ -n "${CLUSTER_RUN_ID:-}" ] || { echo "cluster: no cluster is up" >&2; return 1; }
  [[ ${1:-} =~ ^[1-9][0-9]*$ ]] && [ "$1" -le "$CLUSTER_NODES" ] ||
    { echo "cluster: no node '${1:-}' (nodes are 1..$CLUSTER_NODES)" >&2; return 1; }
}

# Runs "$@" in the background and waits: a trapped signal then interrupts the wait at once,
# where a foreground child would delay the trap (and the teardown) until the child exits.
_cluster_wait_bg() {
  local rc
  "$@" &
  _cluster_bg=$!  # for cluster_down, when a trap interrupts this wait
  while :; do
    rc=0
    wait "$_cluster_bg" 2>/dev/null || rc=$?  # no "Killed" line when cluster_down ends it
    [ "$rc" -gt 128 ] && kill -0 "$_cluster_bg" 2>/dev/null || break
  done
  _cluster_bg=
  return "$rc"
}

# cluster_exec NODE CMD...: CMD inside node NODE, hostname nodeNODE, same cwd and environment.
cluster_exec() {
  local node=${1:-}
  _cluster_node_ok "$node" || return 2
  shift
  _cluster_wait_bg ip netns exec "$(cluster_ns "$node")" unshare --uts -- \
    sh -c 'hostname "$0" && exec "$@"' "node$node" "$@"
}

# cluster_mpirun_args: the mpirun options that span the cluster, one per line (for a launcher
# that runs mpirun itself: MPIRUN_ARGS="$(cluster_mpirun_args | tr '\n' ' ')" jobs/local.sh).
cluster_mpirun_args() {
  # shellcheck disable=SC2054  # the commas belong to btl's value
  local args=(--hostfile "$CLUSTER_HOSTFILE" --mca plm_rsh_agent "$CLUSTER_AGENT"
    --mca oob_tcp_if_include "$CLUSTER_SUBNET" --mca btl_tcp_if_include "$CLUSTER_SUBNET"
    --mca btl self,vader,tcp --mca orte_tmpdir_base "$CLUSTER_DIR/tmp" --oversubscribe
    --bind-to none)
  # --bind-to none: every node's daemon sees the whole machine and would bind its first rank to
  # core 0, so the nodes' ranks would share one core (measured: forward 67 ms instead of 32).
  [ "$EUID" -ne 0 ] || args+=(--allow-run-as-root)
  printf '%s\n' "${args[@]}"
}

# cluster_mpirun ARGS...: mpirun on node1 over the whole cluster; ARGS as for mpirun.
cluster_mpirun() {
  _cluster_node_ok 1 || return 2
  local args
  mapfile -t args < <(cluster_mpirun_args)
  cluster_exec 1 "${CLUSTER_MPIRUN:-mpirun}" "${args[@]}" "$@"
}

# cluster_shape NODE RATE: token-bucket limit on NODE's link, both directions (RATE as tc: 100mbit).
cluster_shape() {
  local node=${1:-} rate=${2:-} bytes burst
  _cluster_node_ok "$node" || return 2
  bytes=$(_cluster_rate_bytes "$rate") || { echo "cluster_shape: bad rate '$rate' (e.g. 100mbit, 1gbit)" >&2; return 2; }
  burst=$(cluster_burst_bytes "$bytes")
  tc -n "$(cluster_ns "$node")" qdisc replace dev "$(_cluster_nic "$node")" root tbf rate "$rate" \
    burst "$burst" latency 100ms &&
    tc -n "slc-$CLUSTER_RUN_ID-sw" qdisc replace dev "$CLUSTER_RUN_ID-$node" root tbf rate "$rate" \
      burst "$burst" latency 100ms
}

# cluster_burst_bytes BYTES_PER_S: the token bucket's burst at that rate: 10 ms at full rate, and
# at least two 64 KiB GSO packets, which tbf cannot split cheaply.
cluster_burst_bytes() { echo $(($1 / 100 > 131072 ? $1 / 100 : 131072)); }

cluster_unshape() {
  _cluster_node_ok "${1:-}" || return 2
  tc -n "$(cluster_ns "$1")" qdisc del dev "$(_cluster_nic "$1")" root 2>/dev/null || true
  tc -n "slc-$CLUSTER_RUN_ID-sw" qdisc del dev "$CLUSTER_RUN_ID-$1" root 2>/dev/null || true
}

_cluster_rate_bytes() {  # RATE in tc's decimal units (1kbit = 1000 bit/s, 1kbps = 1000 byte/s)
  [[ ${1,,} =~ ^([0-9]+)([kmg]?)(bit|bps)$ ]] || return 1
  local n=${BASH_REMATCH[1]}
  case ${BASH_REMATCH[2]} in k) n=$((n * 1000)) ;; m) n=$((n * 1000000)) ;; g) n=$((n * 1000000000)) ;; esac
  [ "${BASH_REMATCH[3]}" = bps ] || n=$((n / 8))
  [ "$n" -gt 0 ] && echo "$n"
}

# cluster_cut NODE / cluster_heal NODE: unplug / replug NODE's cable (both ends of its veth).
cluster_cut() {
  _cluster_node_ok "${1:-}" || return 2
  ip -n "$(cluster_ns "$1")" link set "$(_cluster_nic "$1")" down &&
    ip -n "slc-$CLUSTER_RUN_ID-sw" link set "$CLUSTER_RUN_ID-$1" down
}

cluster_heal() {
  _cluster_node_ok "${1:-}" || return 2
  ip -n "slc-$CLUSTER_RUN_ID-sw" link set "$CLUSTER_RUN_ID-$1" up &&
    ip -n "$(cluster_ns "$1")" link set "$(_cluster_nic "$1")" up
}

# _cluster_nic NODE: the node's end of its veth, eth0 unless a test renamed it (ens3, ...).
_cluster_nic() {
  ip -n "$(cluster_ns "$1")" -o link show type veth | awk -F': ' '{ sub(/@.*/, "", $2); print $2; exit }'
}

# cluster_ping FROM TO [SECONDS]: 0 if node TO answers node FROM over TCP (no ping here).
cluster_ping() {
  _cluster_node_ok "${1:-}" && _cluster_node_ok "${2:-}" || return 2
  cluster_exec "$1" "$(_cluster_python)" "${_cluster_lib%/*}/netprobe.py" reach "$(cluster_addr "$2")" "${3:-1}"
}

# cluster_down: kills everything in this shell's run, deletes its namespaces and CLUSTER_DIR.
cluster_down() {
  [ -n "$_cluster_id" ] || return 0
  # Quietly: bash would report the command a trap interrupted (and we kill) as "Killed".
  { _cluster_teardown "$_cluster_id"; [ -z "$_cluster_bg" ] || wait "$_cluster_bg" || true; } 2>/dev/null
  _cluster_id=
  unset CLUSTER_RUN_ID CLUSTER_DIR CLUSTER_NODES CLUSTER_SLOTS CLUSTER_SUBNET CLUSTER_HOSTFILE CLUSTER_AGENT
  return 0
}

_cluster_teardown() {  # ID: safe to repeat, and to run from the watchdog at the same time
  local id=$1 nss ns pids dir
  nss=$(ip netns list 2>/dev/null | awk -v p="slc-$id-" 'index($1, p) == 1 { print $1 }')
  for _ in 1 2 3 4 5; do  # until none is left: a process may fork while we kill
    pids=$(for ns in $nss; do ip netns pids "$ns" 2>/dev/null; done | grep -vx -e "$$" -e "$BASHPID") || true
    [ -n "$pids" ] || break
    # shellcheck disable=SC2086  # one pid a word
    kill -9 $pids 2>/dev/null || true
    sleep 0.1
  done
  for ns in $nss; do ip netns delete "$ns" 2>/dev/null || true; done
  { read -r _ && read -r dir; } <"$_cluster_registry/$id" 2>/dev/null || true
  for dir in "${dir:-}" "${TMPDIR:-/tmp}/slc-$id".*; do
    case $dir in */slc-"$id".??????) rm -rf -- "$dir" ;; esac
  done
  rm -f -- "$_cluster_registry/$id"
}

_cluster_starttime() {  # field 22 of /proc/PID/stat, after the parenthesised command name
  local s
  read -r s <"/proc/$1/stat" 2>/dev/null || return 1
  s=${s##*) }
  set -- $s
  echo "${20}"
}

_cluster_owner_alive() {  # ID: the owning shell still runs (same pid and start time)
  local pid=${1%%-*} now recorded=
  now=$(_cluster_starttime "$pid") || return 1
  read -r recorded <"$_cluster_registry/$1" 2>/dev/null || true
  [ -z "$recorded" ] || [ "$recorded" = "$now" ]
}

# cluster_reap: removes the runs of owners that are gone (killed without their traps running).
cluster_reap() {
  local id
  for id in $({ ip netns list 2>/dev/null | sed -n 's/^slc-\([0-9]\{1,7\}-[0-9a-f]\{4\}\)-.*/\1/p'
                ls "$_cluster_registry" 2>/dev/null; } | grep -x '[0-9]\{1,7\}-[0-9a-f]\{4\}' | sort -u); do
    [ "$id" != "$_cluster_id" ] && ! _cluster_owner_alive "$id" || continue
    echo "cluster: removing run $id, whose owner is gone" >&2
    _cluster_teardown "$id"
  done
}

# EXIT, INT, TERM and HUP run cluster_down after whatever trap the caller had set.
# shellcheck disable=SC2120  # $3 is trap -p's output, not an argument
_cluster_traps_install() {
  [ -z "$_cluster_traps" ] || return 0
  local sig code prev
  for sig in EXIT HUP INT TERM; do
    prev=$(trap -p "$sig")  # trap -- 'CODE' SIG
    if [ -n "$prev" ]; then eval "set -- $prev"; prev=$3; fi
    case $sig in EXIT) code= ;; HUP) code='; exit 129' ;; INT) code='; exit 130' ;; TERM) code='; exit 143' ;; esac
    # shellcheck disable=SC2064  # expanded now on purpose: the caller's trap as it was
    trap "${prev:+$prev; }cluster_down$code" "$sig"
  done
  _cluster_traps=1
}

_cluster_main() {
  case ${1:-} in
    can-run) cluster_can_run ;;
    reap) cluster_reap ;;
    watch)  # internal, started by cluster_up: watch ID
      while [ -e "$_cluster_registry/$2" ] && _cluster_owner_alive "$2"; do sleep 0.5; done
      [ ! -e "$_cluster_registry/$2" ] || _cluster_teardown "$2" ;;
    demo)
      local why
      why=$(cluster_can_run) || { echo "cannot run here: $why" >&2; return 77; }
      cluster_up 2 2 && echo "run $CLUSTER_RUN_ID: hostfile $CLUSTER_HOSTFILE" || return 1
      cluster_mpirun -np 4 sh -c 'echo "$(hostname) rank $OMPI_COMM_WORLD_RANK local $OMPI_COMM_WORLD_LOCAL_RANK"'
      cluster_down ;;
    *) echo "usage: ${0##*/} demo | can-run | reap   (or source it: see README.md)" >&2; return 2 ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  _cluster_main "$@"
  exit
fi
