# A private single-node Slurm for e2e tests: sourced, not run.
#   slurm_start DIR   munged, slurmctld and slurmd with everything under DIR (own munge key and
#                     socket, own ports), SLURM_CONF exported; returns 77 with the reason in
#                     $slurm_skip_reason when Slurm cannot run here (not root, not installed, a
#                     daemon that will not start or a node that never comes up, with its log).
#                     DIR's parents must be traversable by the munge user.
#   slurm_stop        cancels every job, stops the three daemons and waits for them to exit.
#   slurm_stepds      pids of this cluster's step daemons.
# Its pieces (slurm_missing, slurm_munge_key, slurm_conf_common, slurm_kill_pidfile,
# slurm_stepds_of) also build the two-node Slurm of tests/cluster/slurm_nodes_lib.sh.
# Nothing touches the system's /etc/munge, /etc/slurm or running daemons.

slurm_dir=
slurm_skip_reason=

# slurm_missing: 0 if a test Slurm can run here, else the reason on stdout and 1 (not root, a
# daemon or client missing, no munge user). Shared with tests/cluster/slurm_nodes_lib.sh.
slurm_missing() {
  local tool
  [ "$(id -u)" -eq 0 ] || { echo "not root: slurmd must run as root to start jobs"; return 1; }
  for tool in munged slurmctld slurmd slurmstepd sbatch scontrol squeue sinfo srun scancel runuser; do
    command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
      { echo "$tool is not installed (scripts/install-deps.sh installs slurmctld slurmd slurm-client" \
          "munge)"; return 1; }
  done
  id munge >/dev/null 2>&1 || { echo "no munge user (the munge package creates it)"; return 1; }
}

# slurm_munge_key DIR: DIR/munge holding a fresh key. munged checks ownership and permissions on
# every path it uses: root owns DIR, the munge user owns DIR/munge (world-traversable, so slurm
# can reach the socket); DIR's parents must be traversable by the munge user.
slurm_munge_key() {
  mkdir -p "$1/munge" &&
    dd if=/dev/urandom of="$1/munge/munge.key" bs=1024 count=1 status=none &&
    chmod 755 "$1" && chown -R munge:munge "$1/munge" && chmod 755 "$1/munge" &&
    chmod 400 "$1/munge/munge.key"
}

# slurm_conf_common DIR: the slurm.conf lines every test Slurm shares: munge under DIR, no cgroups,
# root daemons, the controller's state, pid and log under DIR, no accounting.
slurm_conf_common() {
  cat <<EOF
AuthType=auth/munge
AuthInfo=socket=$1/munge/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$1/state
SlurmctldPidFile=$1/slurmctld.pid
SlurmctldLogFile=$1/log/slurmctld.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
KillWait=10
EOF
}

# slurm_work: $work (open to the munge user, whose munged must reach its socket below), removed
# with the cluster at exit, and a Slurm started in $work/slurm; else exit 77 saying why.
slurm_work() {
  new_work slurm_stop
  chmod 755 "$work"
  slurm_start "$work/slurm" || { echo "skipped: Slurm cannot run here: $slurm_skip_reason"; exit 77; }
}

slurm_start() {
  slurm_dir=$1
  slurm_skip_reason=$(slurm_missing) || return 77
  local host
  host=$(hostname)
  slurm_munge_key "$slurm_dir" || { slurm_skip_reason="cannot make a munge key under $slurm_dir"; return 77; }
  mkdir -p "$slurm_dir/state" "$slurm_dir/spool" "$slurm_dir/log"
  local munged=/usr/sbin/munged
  command -v munged >/dev/null && munged=$(command -v munged)
  if ! runuser -u munge -- "$munged" --socket="$slurm_dir/munge/munge.sock" \
      --key-file="$slurm_dir/munge/munge.key" --log-file="$slurm_dir/munge/munged.log" \
      --pid-file="$slurm_dir/munge/munged.pid" --seed-file="$slurm_dir/munge/munged.seed"; then
    slurm_skip_reason="munged would not start: $(tail -n 1 "$slurm_dir/munge/munged.log" 2>/dev/null)"
    return 77
  fi

  # Ports from the pid, so two test runs on one machine do not meet.
  local port=$((20000 + ($$ % 10000) * 2))
  {
    cat <<EOF
ClusterName=slimtrain-test
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmdSpoolDir=$slurm_dir/spool
SlurmdPidFile=$slurm_dir/slurmd.pid
SlurmdLogFile=$slurm_dir/log/slurmd.log
EOF
    slurm_conf_common "$slurm_dir"
    echo "NodeName=$host CPUs=2 RealMemory=8000 State=UNKNOWN"
    echo "PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP"
  } >"$slurm_dir/slurm.conf"
  export SLURM_CONF=$slurm_dir/slurm.conf
  local ctld=slurmctld slurmd=slurmd
  command -v slurmctld >/dev/null || ctld=/usr/sbin/slurmctld
  command -v slurmd >/dev/null || slurmd=/usr/sbin/slurmd
  "$ctld" -f "$SLURM_CONF" -i || { slurm_skip_reason="slurmctld would not start"; return 77; }
  "$slurmd" -f "$SLURM_CONF" || { slurm_skip_reason="slurmd would not start"; return 77; }
  local deadline=$((SECONDS + 30))
  until sinfo -h -o %t 2>/dev/null | grep -qx idle; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      slurm_skip_reason="no idle node within 30 s; last log lines:
$(tail -n 3 "$slurm_dir/log/slurmctld.log" "$slurm_dir/log/slurmd.log" 2>/dev/null)"
      return 77
    fi
    sleep 0.5
  done
}

# slurm_kill_pidfile FILE: TERM to the daemon named in FILE, KILL if it lingers past 10 s.
slurm_kill_pidfile() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill "$pid" 2>/dev/null
  local deadline=$((SECONDS + 10))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$SECONDS" -ge "$deadline" ]; then kill -9 "$pid" 2>/dev/null; break; fi
    sleep 0.2
  done
}

slurm_stop() {
  [ -n "$slurm_dir" ] && [ -f "$slurm_dir/slurm.conf" ] || return 0
  if [ -f "$slurm_dir/slurmctld.pid" ]; then
    scancel --full --quiet --user=root 2>/dev/null
    local deadline=$((SECONDS + 20))
    while [ -n "$(squeue -h -o %i 2>/dev/null)" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.5; done
  fi
  slurm_kill_pidfile "$slurm_dir/slurmd.pid"
  slurm_kill_pidfile "$slurm_dir/slurmctld.pid"
  slurm_kill_pidfile "$slurm_dir/munge/munged.pid"
  # A step daemon outlives slurmd only when a job was still being torn down.
  local p
  for p in $(slurm_stepds); do kill -9 "$p" 2>/dev/null; done
  true
}

# slurm_stepds: pids of this cluster's slurmstepd processes (one per running or dying job step);
# they inherited slurmd's SLURM_CONF, which tells them apart from any other Slurm on the machine.
slurm_stepds() { slurm_stepds_of "$slurm_dir/slurm.conf"; }

# slurm_stepds_of CONF: pids of the step daemons of the Slurm CONF configures.
slurm_stepds_of() {
  local p
  for p in $(pgrep -x slurmstepd); do
    # { } 2>/dev/null: a daemon that exits after pgrep makes the redirection itself fail.
    { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null | grep -qx "SLURM_CONF=$1" && echo "$p"
  done
}
