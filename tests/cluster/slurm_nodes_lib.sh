# shellcheck shell=bash
# A real Slurm across the nodes of a simulated cluster (cluster.sh): sourced, not run.
#   slurm_nodes_can_run   0, or the reason it cannot run here on stdout and 1 (not root, Slurm or
#                         munge missing); call before cluster_up.
#   slurm_nodes_start DIR munged, slurmctld on node1 and one slurmd per node, everything under DIR
#                         (own munge key and socket), SLURM_CONF exported; waits until every node
#                         is idle. 1 with the daemons' last log lines when that fails.
#   sl CMD...             a Slurm client command (sbatch, squeue, scontrol, ...) on node1: only the
#                         nodes reach slurmctld, the host has no route to the cluster's subnet.
#   slurm_nodes_stop      cancels every job, stops the daemons; safe to repeat, and after cluster_down.
#   slurm_nodes_stepds    pids of this Slurm's step daemons, on any node.
# Every daemon runs inside a node's namespace, munged in node1's (its socket is a path, which every
# namespace reaches), so cluster_down, and the cluster watchdog after a SIGKILL, end them all.

slurm_nodes_dir=

slurm_nodes_can_run() {
  local tool
  [ "$(id -u)" -eq 0 ] || { echo "not root: slurmd must run as root to start jobs"; return 1; }
  for tool in munged slurmctld slurmd slurmstepd sbatch scontrol squeue sinfo srun scancel runuser; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
      { echo "$tool is not installed (scripts/install-deps.sh installs slurmctld slurmd slurm-client" \
          "munge)"; return 1; }
  done
  id munge >/dev/null 2>&1 || { echo "no munge user (the munge package creates it)"; return 1; }
}

sl() { cluster_exec 1 "$@"; }

slurm_nodes_start() {
  slurm_nodes_dir=$1
  local d=$1 i nodes=
  # munged checks ownership and permissions of every path it uses; DIR's parents must be
  # traversable by the munge user.
  mkdir -p "$d/munge" "$d/state" "$d/log"
  dd if=/dev/urandom of="$d/munge/munge.key" bs=1024 count=1 status=none
  chmod 755 "$d"
  chown -R munge:munge "$d/munge"
  chmod 755 "$d/munge"
  chmod 400 "$d/munge/munge.key"
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
  cat >"$d/slurm.conf" <<EOF
ClusterName=slimtrain-nodes
SlurmctldHost=node1($(cluster_addr 1))
AuthType=auth/munge
AuthInfo=socket=$d/munge/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd-%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
TmpFS=$d/tmp/%n
SlurmdTimeout=1800
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
KillWait=10
EOF
  for ((i = 1; i <= CLUSTER_NODES; i++)); do
    echo "NodeName=node$i NodeAddr=$(cluster_addr "$i") CPUs=2 RealMemory=8000 State=UNKNOWN" >>"$d/slurm.conf"
  done
  echo "PartitionName=debug Nodes=$nodes Default=YES MaxTime=INFINITE State=UP" >>"$d/slurm.conf"
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
  local d=$slurm_nodes_dir f pid deadline p
  [ -n "$d" ] && [ -f "$d/slurm.conf" ] || return 0
  if [ -n "${CLUSTER_RUN_ID:-}" ] && [ -f "$d/slurmctld.pid" ]; then
    sl scancel --full --quiet --user=root 2>/dev/null
    deadline=$((SECONDS + 20))
    while [ -n "$(sl squeue -h -o %i 2>/dev/null)" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.5; done
  fi
  for f in "$d"/slurmd-*.pid "$d/slurmctld.pid" "$d/munge/munged.pid"; do
    pid=$(cat "$f" 2>/dev/null) || continue
    [ -n "$pid" ] && kill "$pid" 2>/dev/null || continue
    deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null; do
      [ "$SECONDS" -lt "$deadline" ] || { kill -9 "$pid" 2>/dev/null; break; }
      sleep 0.2
    done
  done
  for p in $(slurm_nodes_stepds); do kill -9 "$p" 2>/dev/null; done
  rm -f "$d/slurm.conf"  # stopped: a second call does nothing
}

slurm_nodes_stepds() {
  local p
  for p in $(pgrep -x slurmstepd); do
    tr '\0' '\n' 2>/dev/null <"/proc/$p/environ" | grep -qx "SLURM_CONF=$slurm_nodes_dir/slurm.conf" && echo "$p"
  done
}
