# shellcheck shell=bash
# A real Slurm across the nodes of a simulated cluster (cluster.sh): sourced, not run.
#   slurm_nodes_start DIR munged, slurmctld on node1 and one slurmd per node, everything under DIR
#                         (own munge key and socket), SLURM_CONF exported; waits until every node
#                         is idle. 1 with the daemons' last log lines when that fails.
#   sl CMD...             a Slurm client command (sbatch, squeue, scontrol, ...) on node1: only the
#                         nodes reach slurmctld, the host has no route to the cluster's subnet.
#   slurm_nodes_stop      cancels every job, stops the daemons; safe to repeat, and after cluster_down.
#   slurm_nodes_stepds    pids of this Slurm's step daemons, on any node.
# Every daemon runs inside a node's namespace, munged in node1's (its socket is a path, which every
# namespace reaches), so cluster_down, and the cluster watchdog after a SIGKILL, end them all.

# The single-node test Slurm's pieces: slurm_missing (call it before cluster_up: 0, or why Slurm
# cannot run here), slurm_munge_key, slurm_conf_common, slurm_kill_pidfile, slurm_stepds_of.
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/slurm_cluster.sh"

slurm_nodes_dir=

sl() { cluster_exec 1 "$@"; }

slurm_nodes_start() {
  slurm_nodes_dir=$1
  local d=$1 i nodes=
  slurm_munge_key "$d" || { echo "cannot make a munge key under $d"; return 1; }
  mkdir -p "$d/state" "$d/log"
  cluster_exec 1 runuser -u munge -- "$(command -v munged || echo /usr/sbin/munged)" \
    --socket="$d/munge/munge.sock" --key-file="$d/munge/munge.key" --log-file="$d/munge/munged.log" \
    --pid-file="$d/munge/munged.pid" --seed-file="$d/munge/munged.seed" --origin="$(cluster_addr 1)" ||
    { echo "munged would not start: $(tail -n 1 "$d/munge/munged.log" 2>/dev/null)"; return 1; }

  for ((i = 1; i <= CLUSTER_NODES; i++)); do
    nodes=${nodes:+$nodes,}node$i
    mkdir -p "$d/spool/node$i" "$d/tmp/node$i"
  done
  # Each node has its own namespace, so the default ports cannot meet another test's Slurm.
  # %n: per-node spool, pid and log files (the nodes share one file system).
  # TmpFS per node: srun's PMIx plugin makes each node's client directory there, and two nodes
  # of one step collide in a shared /tmp ("File exists"; the step aborts).
  # SlurmdTimeout: a node cut off for a test must not be declared DOWN (and its job killed) by
  # slurmctld while the test still runs; the default is 300 s, this is for runs far longer.
  {
    cat <<EOF
ClusterName=slimtrain-nodes
SlurmctldHost=node1($(cluster_addr 1))
SlurmdSpoolDir=$d/spool/%n
SlurmdPidFile=$d/slurmd-%n.pid
SlurmdLogFile=$d/log/slurmd-%n.log
TmpFS=$d/tmp/%n
SlurmdTimeout=1800
EOF
    slurm_conf_common "$d"
    for ((i = 1; i <= CLUSTER_NODES; i++)); do
      echo "NodeName=node$i NodeAddr=$(cluster_addr "$i") CPUs=2 RealMemory=8000 State=UNKNOWN"
    done
    echo "PartitionName=debug Nodes=$nodes Default=YES MaxTime=INFINITE State=UP"
  } >"$d/slurm.conf"
  # ip netns exec mounts a /sys of the node's own (so /sys/class/net shows its interfaces) without
  # /sys/fs/cgroup, where slurmd's autodetection looks; proctrack/linuxproc and task/none use no
  # cgroup, naming the version just lets slurmd start.
  echo "CgroupPlugin=cgroup/v1" >"$d/cgroup.conf"
  export SLURM_CONF=$d/slurm.conf
  cluster_exec 1 "$(command -v slurmctld || echo /usr/sbin/slurmctld)" -f "$SLURM_CONF" -i ||
    { echo "slurmctld would not start: $(tail -n 3 "$d/log/slurmctld.log" 2>/dev/null)"; return 1; }
  for ((i = 1; i <= CLUSTER_NODES; i++)); do
    cluster_exec "$i" "$(command -v slurmd || echo /usr/sbin/slurmd)" -N "node$i" -f "$SLURM_CONF" ||
      { echo "slurmd on node$i would not start: $(tail -n 3 "$d/log/slurmd-node$i.log" 2>/dev/null)"; return 1; }
  done
  local deadline=$((SECONDS + 30))
  until [ "$(sl sinfo -h -N -o %t 2>/dev/null | grep -cx idle)" -eq "$CLUSTER_NODES" ]; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "not every node idle within 30 s: $(sl sinfo -h -N -o '%N %t' 2>&1 | tr '\n' ' ')"
      tail -n 3 "$d"/log/*.log
      return 1
    fi
    sleep 0.5
  done
}

slurm_nodes_stop() {
  local d=$slurm_nodes_dir f deadline p
  [ -n "$d" ] && [ -f "$d/slurm.conf" ] || return 0
  if [ -n "${CLUSTER_RUN_ID:-}" ] && [ -f "$d/slurmctld.pid" ]; then
    sl scancel --full --quiet --user=root 2>/dev/null
    deadline=$((SECONDS + 20))
    while [ -n "$(sl squeue -h -o %i 2>/dev/null)" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.5; done
  fi
  for f in "$d"/slurmd-*.pid "$d/slurmctld.pid" "$d/munge/munged.pid"; do
    slurm_kill_pidfile "$f"
  done
  for p in $(slurm_nodes_stepds); do kill -9 "$p" 2>/dev/null; done
  rm -f "$d/slurm.conf"  # stopped: a second call does nothing
}

slurm_nodes_stepds() { slurm_stepds_of "$slurm_nodes_dir/slurm.conf"; }
