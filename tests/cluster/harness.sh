#!/bin/bash
# CTest cluster_harness: the simulated cluster of cluster.sh does what README.md promises. Ranks
# land on the right nodes, shaping and cuts act on the link, and nothing outlives a run: not
# after cluster_down, not after SIGTERM (traps), not after SIGKILL (watchdog, then cluster_reap).
# Skips (77) where namespaces cannot be made. About 15 s.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=cluster.sh
source "$here/cluster.sh"
why=$(cluster_can_run) || { echo "skipped: $why"; exit 77; }

py=/usr/bin/python3
[ -x "$py" ] || py=python3
work=$(mktemp -d)
# Set before cluster_up, which chains its teardown onto it. The reap removes a run that the
# no-watchdog case below leaves behind on purpose, should this test die before it does.
trap 'rm -rf "$work"; cluster_reap 2>/dev/null' EXIT
fails=0
passes=0
check() {  # check "description" command...
  local what=$1; shift
  if "$@"; then passes=$((passes + 1)); echo "ok   $what"; else fails=$((fails + 1)); echo "FAIL $what"; fi
}
same() { [ "$1" = "$2" ] || { echo "  got:"; sed 's/^/  | /' <<<"$1"; echo "  wanted:"; sed 's/^/  | /' <<<"$2"; return 1; }; }
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }' || { echo "  $1 not in [$2, $3]"; return 1; }; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# gone ID: no namespace, registry entry or directory of run ID is left.
gone() {
  ! ip netns list 2>/dev/null | grep -q "^slc-$1-" && [ ! -e "/run/slimtrain-cluster/$1" ] &&
    ! compgen -G "${TMPDIR:-/tmp}/slc-$1.*" >/dev/null
}
run_pids() { local ns; for ns in $(ip netns list 2>/dev/null | awk -v p="slc-$1-" 'index($1, p) == 1 { print $1 }'); do ip netns pids "$ns"; done; }
# all_dead PID...: none runs. A zombie counts as dead: this VM's pid 1 reaps the orphans that a
# kill -9 of a whole process tree leaves only seconds later.
all_dead() {
  local p i state
  for p in "$@"; do
    for ((i = 0; i < 20; i++)); do
      state=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$p/stat" 2>/dev/null)
      [ -z "$state" ] || [ "$state" = Z ] && continue 2
      sleep 0.1
    done
    echo "  pid $p ($(cat "/proc/$p/comm" 2>/dev/null), state $state) still runs"
    return 1
  done
}
# ranks NP: one line per rank, "host rank local_rank local_size cwd forwarded not_forwarded".
rank_line='echo "$(hostname) $OMPI_COMM_WORLD_RANK $OMPI_COMM_WORLD_LOCAL_RANK $OMPI_COMM_WORLD_LOCAL_SIZE'
rank_line+=' $(pwd) ${SLIMTRAIN_PROBE:-unset} ${PROBE_LOCAL:-unset}"'
ranks() {  # ranks NP [MPIRUN ARGS...]
  local np=$1
  shift
  SLIMTRAIN_PROBE=fwd PROBE_LOCAL=local cluster_mpirun -np "$np" "$@" -x SLIMTRAIN_PROBE sh -c "$rank_line" |
    sort -k2n
}
unreachable() { ! cluster_ping "$@" 2>/dev/null; }
left_behind() { ! gone "$1"; }
ns_count() { ip netns list 2>/dev/null | grep -c "^slc-$1-"; }
count_in() {  # count_in NS COMM: processes named COMM in namespace NS
  local p n=0
  for p in $(ip netns pids "$1" 2>/dev/null); do [ "$(cat "/proc/$p/comm" 2>/dev/null)" != "$2" ] || n=$((n + 1)); done
  echo "$n"
}
mbps() {  # FROM TO BYTES: MB/s of one transfer to the sink on node TO
  cluster_exec "$1" "$py" "$here/netprobe.py" send "$(cluster_addr "$2")" 5001 "$3" | awk '{ print $3 }'
}

cd "$work" || exit 1  # the ranks' cwd must follow, on every node
t0=$(now_ms)
check "cluster_up 2 2" cluster_up 2 2
echo "     bring-up 2x2: $(($(now_ms) - t0)) ms (run $CLUSTER_RUN_ID)"
check "mpirun -np 4 on 2x2: two nodes, local ranks 0-1, local size 2; -x forwards, the rest stays on node1" \
  same "$(ranks 4)" "node1 0 0 2 $work fwd local
node1 1 1 2 $work fwd local
node2 2 0 2 $work fwd unset
node2 3 1 2 $work fwd unset"
# As ssh would: options before the host, user@, and words joined and parsed by the remote shell.
check "the agent takes ssh options and user@host, and quotes as ssh does" same \
  "$("$CLUSTER_AGENT" -x -p 22 -o BatchMode=yes root@"$(cluster_addr 2)" echo '"a  b"' '$(hostname)')" "a  b node2"

cluster_exec 1 "$py" "$here/netprobe.py" sink 5001 &
cluster_exec 2 "$py" "$here/netprobe.py" sink 5001 &
# One assignment per line: bash 5.2 fails to run a trap that fires during a=$(..) b=$(..).
open12=$(mbps 1 2 16000000)
open21=$(mbps 2 1 16000000)
echo "     unshaped: node1->node2 $open12 MB/s, node2->node1 $open21 MB/s"
cluster_shape 2 100mbit
s12=$(mbps 1 2 16000000)
s21=$(mbps 2 1 16000000)
echo "     100mbit:  node1->node2 $s12 MB/s, node2->node1 $s21 MB/s (12.5 on the wire)"
# Bounds: tbf cannot be beaten; the lower ones only catch a broken qdisc (drops, stalls).
check "100mbit into node2 (switch-side tbf)" within "$s12" 6 14
check "100mbit out of node2 (eth0 tbf)" within "$s21" 6 14
check "unshaped is over 3x faster than 100mbit" within "$open12" 40 1e9
cluster_shape 2 1gbit
g12=$(mbps 1 2 64000000)
g21=$(mbps 2 1 64000000)
echo "     1gbit:    node1->node2 $g12 MB/s, node2->node1 $g21 MB/s (125 on the wire)"
check "1gbit both ways" within "$(awk -v a="$g12" -v b="$g21" 'BEGIN { print (a > b ? a : b) }')" 50 140
cluster_unshape 2
check "cluster_unshape restores the speed" within "$(mbps 1 2 16000000)" 150 1e9

check "node2 answers node1" cluster_ping 1 2
cluster_cut 2
t0=$(now_ms)
check "after cluster_cut 2, node2 does not answer node1" unreachable 1 2 1
check "... and the probe gave up within 3 s" within "$(($(now_ms) - t0))" 0 3000
check "... nor node1 node2" unreachable 2 1 1
cluster_heal 2
healed() { local i; for i in 1 2 3 4 5; do cluster_ping 1 2 && return 0; sleep 1; done; return 1; }
check "after cluster_heal 2, node2 answers again" healed

id=$CLUSTER_RUN_ID
pids=$(run_pids "$id")
t0=$(now_ms)
cluster_down
echo "     teardown 2x2 with two sinks running: $(($(now_ms) - t0)) ms"
check "cluster_down leaves nothing of the run" gone "$id"
check "... and its processes are dead" all_dead $pids
check "cluster_down again is harmless" cluster_down

check "cluster_up 4 1" cluster_up 4 1
# Radix 1 chains the daemons: node2's starts node3's through the agent, from inside a namespace.
check "mpirun -np 4 on 4x1: four nodes, local rank 0, local size 1 (daemons started in a chain)" \
  same "$(ranks 4 --mca routed_radix 1)" "node1 0 0 1 $work fwd local
node2 1 0 1 $work fwd unset
node3 2 0 1 $work fwd unset
node4 3 0 1 $work fwd unset"
id=$CLUSTER_RUN_ID
cluster_down
check "4x1 torn down" gone "$id"

# child SIG [VAR=VALUE...]: a child shell brings up 2x2 and runs mpirun -np 4 sleep; once the
# ranks run on node2, it gets SIG. Leaves child_rc, child_id and child_pids (its processes).
child() {
  local sig=$1 i
  shift
  rm -f "$work/id"
  # pdeathsig: if this test is killed first, the child still gets a TERM and tears its run down.
  setpriv --pdeathsig TERM env "$@" bash -c 'source "$1" && cluster_up 2 2 &&
    echo "$CLUSTER_RUN_ID" >"$2.tmp" && mv "$2.tmp" "$2" && cluster_mpirun -np 4 sleep 120' \
    child "$here/cluster.sh" "$work/id" >"$work/child.log" 2>&1 &
  local pid=$!
  for ((i = 0; i < 300; i++)); do
    child_id=$(cat "$work/id" 2>/dev/null)
    [ -n "$child_id" ] && [ "$(count_in "slc-$child_id-n2" sleep)" -eq 2 ] && break
    sleep 0.1
  done
  child_pids=$(run_pids "$child_id")
  cluster_reap 2>/dev/null  # must leave a live run alone
  check "SIG$sig case: the child's run is up, and cluster_reap leaves it alone" same "$(ns_count "$child_id")" 3
  local t0
  t0=$(now_ms)
  kill -"$sig" "$pid"
  wait "$pid" 2>/dev/null  # no "Killed" line
  child_rc=$?
  child_exit_ms=$(($(now_ms) - t0))
}
child_exited() { [ "$child_rc" -eq "$1" ] || { echo "  exit $child_rc"; sed 's/^/  | /' "$work/child.log"; return 1; }; }
wait_gone() { local i; for i in $(seq 50); do gone "$1" && return 0; sleep 0.1; done; gone "$1"; }

child TERM
check "SIGTERM: the child exits 143" child_exited 143
check "SIGTERM: its trap tore the run down before it exited" gone "$child_id"
echo "     SIGTERM to exit, teardown included: $child_exit_ms ms"
check "SIGTERM: mpirun, daemons and ranks are dead" all_dead $child_pids

child KILL
check "SIGKILL: the child exits 137" child_exited 137
check "SIGKILL: the watchdog tears the run down within 5 s" wait_gone "$child_id"
check "SIGKILL: mpirun, daemons and ranks are dead" all_dead $child_pids

child KILL CLUSTER_NO_WATCHDOG=1
sleep 0.5
check "SIGKILL without a watchdog: the run is left behind" left_behind "$child_id"
"$here/cluster.sh" reap 2>/dev/null
check "... and cluster.sh reap removes it, as the next cluster_up would" gone "$child_id"
check "... with its processes" all_dead $child_pids

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
