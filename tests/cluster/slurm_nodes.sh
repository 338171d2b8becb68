#!/bin/bash
# CTest cluster_slurm_nodes: jobs/train.sbatch under a real Slurm on two simulated nodes
# (cluster.sh, slurm_nodes_lib.sh): slurmctld and a slurmd on node1, a slurmd on node2.
#  - node2's interface is renamed ens3: jobs/rank.sh picks eth0 on node1 and ens3 on node2.
#  - sbatch -N 2, per launcher (srun --mpi=pmix, mpirun): USR1 -> checkpoint -> exit 75 ->
#    scontrol requeue -> the requeued job resumes on node1 and node2 and finishes.
#  - MAX_RESTARTS=1 and node2's link cut: a rank names node2 as not answering, train.sbatch
#    relaunches on node1 alone (srun --exclude / mpirun --host), which resumes and finishes; the
#    time from the cut to the relaunched run's start is printed as a RECOVERY line (target 30 s).
# Skips (77) where namespaces or Slurm cannot run. About 3 minutes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../e2e/lib.sh"
source "$here/../e2e/resume_lib.sh"
source "$here/../e2e/train_lib.sh"
source "$here/cluster.sh"
source "$here/slurm_nodes_lib.sh"
why=$(cluster_can_run) || { echo "skipped: $why"; exit 77; }
why=$(slurm_missing) || { echo "skipped: $why"; exit 77; }
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
chmod 755 "$work"  # munged, running as user munge, must reach its socket below
# Set before cluster_up, which chains cluster_down after it.
trap 'slurm_nodes_stop; rm -rf "$work"' EXIT

cluster_up 2 1 || { echo "FAIL cluster_up"; exit 1; }
# Nodes whose interfaces differ, as on real clusters: node2's is ens3. The address and the link
# survive the rename; cluster.sh's cut and heal follow the new name.
ns2=$(cluster_ns 2)
ip -n "$ns2" link set eth0 down && ip -n "$ns2" link set eth0 name ens3 && ip -n "$ns2" link set ens3 up
check "node2's interface renamed ens3, its address kept" \
  sh -c "ip -n $ns2 -4 -o addr show dev ens3 | grep -q ' $(cluster_addr 2)/'"
check "  node2 answers node1" cluster_ping 1 2 3
check "  node1 answers node2" cluster_ping 2 1 3

t0=$SECONDS
slurm_nodes_start "$work/slurm" || { echo "FAIL Slurm on two nodes"; exit 1; }
echo "Slurm up in $((SECONDS - t0)) s: $(sl sinfo -h -N -o '%N %t' | tr '\n' ' ')"
make_data "$work" 8 1024 || { echo "FAIL test data"; exit 1; }
printf '%s\n' "model = mlp" "mlp-widths = 32,16" "batch-size = 16" "log-every = 100" "keep-last = 2" \
  >"$work/job.ini"
cd "$root" || exit 1  # train.sbatch runs from the submit directory

job_state() { sl scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
ended() {
  case $(job_state "$1") in COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) return 0 ;; esac
  return 1
}
requeued() { sl scontrol -o show job "$1" | grep -q 'JobState=PENDING.*Restarts=1'; }
succeeded() { sl scontrol -o show job "$1" | grep -q 'JobState=COMPLETED.*ExitCode=0:0'; }
logged() { grep -qs "\"event\":\"$2\"" "$1/metrics.jsonl"; }
# start_hosts RUN: the ranks' hosts of every start record in RUN, one line per launch.
start_hosts() { events "$1" start | "$PY" -c '
import json, sys
for line in sys.stdin:
    print(*[p["host"] for p in json.loads(line)["placement"]])'; }
same() { [ "$1" = "$2" ] || { echo "  got '${1//$'\n'/|}', wanted '${2//$'\n'/|}'"; return 1; }; }
# Both nodes idle and no step daemon left: a requeued job started earlier than Slurm would start
# it must not meet the teardown of its previous incarnation (same job id).
nodes_clean() { [ "$(sl sinfo -h -N -o %t | sort -u)" = idle ] && [ -z "$(slurm_nodes_stepds)" ]; }
show_log() { sed 's/^/  | /' "$2" | tail -n 30; sl scontrol show job "$1" | sed 's/^/  | /' | head -n 8; }
# submit NAME LAUNCHER VAR=VALUE...: jobs/train.sbatch on 2 nodes x 1 rank; prints the job id.
submit() {
  local name=$1 launcher=$2
  shift 2
  (
    # shellcheck disable=SC2163  # "$@" are VAR=VALUE words
    export CONFIG="$work/job.ini" DATA="$work/data.h5" RUN_DIR="$work/$name" LAUNCHER="$launcher" "$@"
    sl sbatch --parsable -N 2 --ntasks-per-node=1 --output="$work/$name.out" --job-name="$name" \
      jobs/train.sbatch
  )
}

requeue_cycle() {  # LAUNCHER
  local L=$1 run=$work/requeue-$1 steps=2000 jobid stop_step
  jobid=$(submit "requeue-$L" "$L" EXTRA_ARGS="--max-steps $steps --checkpoint-every 500")
  check "sbatch -N 2 jobs/train.sbatch (launcher $L)" test -n "$jobid"
  [ -n "$jobid" ] || return 1
  check "  the ranks start" wait_until 60 logged "$run" start
  # What Slurm does before the time limit (--signal=B:USR1@120), without waiting for it.
  sl scancel --batch --signal=USR1 "$jobid"
  if ! check "  USR1 to the batch script: the job requeues itself" wait_until 60 requeued "$jobid"; then
    show_log "$jobid" "$work/requeue-$L.out"
    return 1
  fi
  out=$(cat "$work/requeue-$L.out")
  check "  the start record places rank 0 on node1, rank 1 on node2" same "$(start_hosts "$run")" "node1 node2"
  check "  rank.sh on node1: NCCL over eth0" contains "^rank.sh: node1: NCCL over eth0, InfiniBand: none$"
  check "  rank.sh on node2: NCCL over ens3" contains "^rank.sh: node2: NCCL over ens3, InfiniBand: none$"
  check "  one rank.sh line per node" test "$(grep -c '^rank.sh: ' <<<"$out")" = 2
  check "  the ranks agreed to stop" contains "stop requested by signal 10"
  check "  exit 75, and the script requeued" contains "checkpoint written (exit 75); requeueing job $jobid"
  stop_step=$(event_field "$run" stopped step)
  check "  metrics.jsonl records the stop (exit 75) before the end" \
    test "$(event_field "$run" stopped exit_code)" = 75 -a "$stop_step" -lt "$steps"
  check "  the checkpoint of that step is the latest" latest_is "$run" "$stop_step"
  check "  both nodes clean again" wait_until 60 nodes_clean
  # slurmd revokes a job's credential when the job ends, to the second: a new incarnation started
  # within that second is refused ("Job credential revoked").
  sleep 2
  sl scontrol update JobId="$jobid" StartTime=now
  check "the requeued job completes" wait_until 120 ended "$jobid"
  check "  with state COMPLETED, exit 0" succeeded "$jobid"
  out=$(cat "$work/requeue-$L.out")
  check "  as restart 1" contains "slimtrain job $jobid restart 1"
  check "  resuming from the stop's checkpoint" \
    contains "resumed from .*step-$(printf %08d "$stop_step") at step $stop_step"
  check "  on node1 and node2 again" same "$(start_hosts "$run")" "node1 node2
node1 node2"
  check "  (rank.sh once per node and launch)" test "$(grep -c '^rank.sh: node[12]: ' <<<"$out")" = 4
  check "  and training to the end (done event)" test "$(event_field "$run" "done" step)" = "$steps"
  [ "$fails" -eq 0 ] || show_log "$jobid" "$work/requeue-$L.out"
  echo "[$SECONDS s] requeue cycle ($L) done"
}

cut_cycle() {  # LAUNCHER
  local L=$1 run=$work/cut-$1 steps=12000 jobid fault recovery reported gone
  jobid=$(submit "cut-$L" "$L" MAX_RESTARTS=1 \
    EXTRA_ARGS="--max-steps $steps --checkpoint-every 200 --collective-timeout 10")
  check "sbatch -N 2 MAX_RESTARTS=1 jobs/train.sbatch (launcher $L)" test -n "$jobid"
  [ -n "$jobid" ] || return 1
  check "  a checkpoint appears" wait_until 90 sh -c "ls '$run'/checkpoints/step-* >/dev/null 2>&1"
  cluster_cut 2
  fault=$(date +%s.%N)
  echo "[$SECONDS s] node2's link cut"
  relaunched() { "$PY" -c '
import json, sys
sys.exit(not any(e["event"] == "start" and e["time"] > float(sys.argv[2])
                 for e in map(json.loads, open(sys.argv[1]))))' "$run/metrics.jsonl" "$fault"; }
  relaunched_or_ended() { relaunched || ended "$jobid"; }
  wait_until 90 relaunched_or_ended
  check "  a relaunched run starts" relaunched
  echo "[$SECONDS s] relaunched; healing node2's link"
  # The old step's daemon on node2 can then finish, and the job with it.
  cluster_heal 2
  check "the job completes" wait_until 120 ended "$jobid"
  check "  with state COMPLETED, exit 0" succeeded "$jobid"
  out=$(cat "$work/cut-$L.out")
  # From either side of the cut: node1's rank names node2, or node2's rank names node1 (whichever
  # deadline came first; the launcher is ended 5 s after the first line).
  check "  a rank reported the cut (node2 not answering, or node2 not reaching node1)" \
    grep -Eq "missing ranks: .*on node2 \(no answer\)|^rank [0-9]+ on node2 .* on node1 \(no answer\)" \
    "$run/failure-report-1.txt"
  check "  the script relaunched once, without node2" \
    contains "restart 1 of 1 with --resume auto, without node2"
  check "  on node1 alone" contains "train.sbatch: launching on node1 (excluded: node2)"
  check "  at the same global batch" contains "1 of 2 ranks: --grad-accum 2 keeps the global batch"
  check "  the relaunch resumed from a checkpoint" contains "resumed from .*step-"
  check "  first on node1 and node2, then on node1 only" same "$(start_hosts "$run")" "node1 node2
node1"
  check "  and trained to the end (done event)" test "$(event_field "$run" "done" step)" = "$steps"
  recovery=$("$PY" -c '
import json, sys
for e in map(json.loads, open(sys.argv[1])):
    if e["event"] == "start" and e["time"] > float(sys.argv[2]):
        print(round(e["time"] - float(sys.argv[2]), 1))
        break' "$run/metrics.jsonl" "$fault")
  # Where the time goes: the deadline, then jobs/watch.sh ending the launcher, then the relaunch.
  reported=$(grep -m 1 'ERROR .*missed its deadline' <<<"$out" | awk '{ print $1 }')
  reported=$(date -d "${reported:-@0}" +%s.%N)
  gone=$(sed -n 's/^train.sbatch: exit [0-9]* at \([0-9.]*\) .*/\1/p' <<<"$out" | head -n 1)
  since() { awk -v a="$fault" -v b="$1" 'BEGIN { printf "%.1f", b - a }'; }
  echo "  after the cut: a rank's deadline report $(since "$reported") s," \
    "the launcher ended $(since "${gone:-0}") s," \
    "the relaunched run's start ${recovery:-none} s"
  echo "RECOVERY slurm_nodes launcher=$L seconds=${recovery:-none} target=30"
  check "  recovery within 30 s (${recovery:-none} s)" awk -v r="${recovery:-999}" 'BEGIN { exit !(r <= 30) }'
  [ "$fails" -eq 0 ] || show_log "$jobid" "$work/cut-$L.out"
  check "  both nodes clean again" wait_until 60 nodes_clean
  echo "[$SECONDS s] cut cycle ($L) done"
}

requeue_cycle srun
requeue_cycle mpirun
cut_cycle srun
cut_cycle mpirun
finish
