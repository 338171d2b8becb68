#!/usr/bin/env bash
# jobs/train.sbatch's relaunches, run as a plain script (LAUNCHER=mpirun, 2 ranks on this host, no
# Slurm): MAX_RESTARTS bounds the relaunches in a row that write no new checkpoint.
#  - Two kill -9 of a rank, with a checkpoint between them, at MAX_RESTARTS=1: both relaunched
#    (the checkpoint starts the count again), and the job trains to the end.
#  - A rank that hangs at the same step in every launch (injected), past the checkpoint the
#    relaunch resumes from: the first failure is relaunched (that launch wrote a checkpoint), the
#    second is not (the relaunch wrote none), and the job fails.
# And each launch's failure report is its own file (failure-report-N.txt, the last launch's
# failure-report.txt).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resume_lib.sh"
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && { pkill -KILL -P "$pid"; kill -KILL "$pid"; } 2>/dev/null; rm -rf "$work"' EXIT
make_data "$work" || { echo "cannot make the test data"; exit 1; }
cat >"$work/job.ini" <<EOF
model = cnn-small
batch-size = 16
lr = 0.02
log-every = 1
threads = 1
EOF

job() {  # job RUN EXTRA_ARGS [VAR=VALUE...]: the script in the background, $pid its pid
  local run=$1 extra=$2; shift 2
  (cd "$SLIMTRAIN_SOURCE_DIR" && exec env CONFIG="$work/job.ini" DATA="$work/data.h5" RUN_DIR="$work/$run" \
    LAUNCHER=mpirun JOB_NODES="$(hostname)" RANKS_PER_NODE=2 MPIRUN_ARGS="-np 2 --oversubscribe" \
    MAX_RESTARTS=1 EXTRA_ARGS="$extra" "$@" bash jobs/train.sbatch) >"$work/$run.log" 2>&1 &
  pid=$!
}
ends() {  # ends SECONDS: waits for the script; its exit code in $rc, its output in $out
  local i
  for ((i = 0; i < $1 * 5; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    pkill -KILL -P "$pid"; kill -KILL "$pid"; rc=timeout
  else
    wait "$pid"; rc=$?
  fi
  pid=
  out=$(cat "$work/$run.log")
}
ranks_of() { pgrep -f -- "^[^ ]*/slimtrain train .*--out $work/$1 " | head -n 1; }  # not mpirun
starts() { grep -c '"event":"start"' "$work/$1/metrics.jsonl" 2>/dev/null; }
latest_past() {  # latest_past RUN STEP: the newest checkpoint is after STEP
  local s
  s=$(sed -n 's/^step-0*\([0-9][0-9]*\)$/\1/p' "$work/$1/checkpoints/latest" 2>/dev/null)
  [ -n "$s" ] && [ "$s" -gt "$2" ]
}

# 1. Two deaths with a checkpoint between them.
run=two
# Rank 0 sleeps 30 ms a step (an injected straggler): 400 steps last long enough to be hit.
job two "--max-steps 400 --checkpoint-every 10" \
  SLIMTRAIN_INJECT="rank=0,phase=train,step=1,action=slow,delay=30ms"
check "a checkpoint appears" wait_until 90 latest_past two 0
first=$(sed -n 's/^step-0*//p' "$work/two/checkpoints/latest")
kill -9 "$(ranks_of two)"
relaunched() { [ "$(starts two)" -ge 2 ]; }
check "the relaunched run starts" wait_until 60 relaunched
check "  and checkpoints past the first death's" wait_until 90 latest_past two $((first + 10))
kill -9 "$(ranks_of two)"
ends 240
check "the job ends with exit 0 after two deaths at MAX_RESTARTS=1" test "$rc" = 0
check "  relaunched after the first" contains "(a rank or node failed); restart 1 of 1 with --resume auto"
check "  and after the second, naming the job's second relaunch" \
  contains "restart 1 of 1 with --resume auto (relaunch 2 of this job"
check "  three launches started" test "$(starts two)" = 3
check "  trained to the end (done at step 400)" test "$(event_field "$work/two" done step)" = 400

# 2. A rank that hangs at step 15 in every launch (rank 0 misses the deadline and reports it);
#    checkpoints every 10 steps.
run=same
job same "--max-steps 400 --checkpoint-every 10 --collective-timeout 4" \
  SLIMTRAIN_INJECT="rank=1,phase=train,step=15,action=hang"
ends 180
check "a rank failing at the same step every launch ends the job (exit 1)" test "$rc" = 1
check "  after one relaunch (the first launch wrote step 10)" \
  contains "(a rank or node failed); restart 1 of 1 with --resume auto"
check "  not two (the relaunch wrote no checkpoint)" sh -c "! grep -q 'relaunch 2 of this job' '$work/same.log'"
check "  two launches started" test "$(starts same)" = 2
check "  the first launch's report kept apart" grep -q '^rank [01] on .* exit 1: ' "$work/same/failure-report-1.txt"
check "  the last launch's report is failure-report.txt" \
  grep -q '^rank [01] on .* exit 1: ' "$work/same/failure-report.txt"
check "  (no per-launch file of the last launch left)" test ! -e "$work/same/failure-report-2.txt"
finish
