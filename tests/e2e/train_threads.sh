#!/usr/bin/env bash
# The thread rule (README, "Threads"): with N ranks on a node, a rank's LibTorch intra-op threads,
# OpenMP and the BLAS's own pool together use the rank's share of the cores (--threads 0). At 1
# rank (no launcher: the whole machine), 2 and 4 ranks (mpirun --bind-to none, so the share
# comes from slimtrain's own split, not from a binding), every rank's threads are read from
# /proc/PID/task over 2 s of training (busy_threads.py): no rank may have more threads using a
# quarter of a core or more than its share. A run told --threads 2 at 2 ranks shows what a
# fight looks like (more busy threads than the share) and gets the start-up warning.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resume_lib.sh"
unset OMP_NUM_THREADS OPENBLAS_NUM_THREADS  # what a user's shell has: nothing set
work=$(mktemp -d)
trap 'kill -9 -- "-$job" 2>/dev/null; rm -rf "$work"' EXIT
make_data "$work" 28 4096 || { echo "cannot make the test data"; exit 1; }
cores=$(nproc)
job=

# sample NAME NP [LAUNCHER-ARGS...]: starts the job, waits for its first train event, prints and returns
# the busy-thread lines of its ranks (in $busy_lines), then kills it.
sample() {
  local name=$1 np=$2; shift 2
  start_job "$work/$name.log" "$@" "$SLIMTRAIN_BIN" train --data "$work/data.h5" \
    --out "$work/$name" --resume none --model cnn-small --batch-size 64 --max-steps 1000000 \
    --eval-every 0 --checkpoint-every 0 --final-split none --log-every 10 "${extra[@]}"
  if ! wait_until 60 grep -qs '"event":"train"' "$work/$name/metrics.jsonl"; then
    echo "FAIL $name: no train event within 60 s"; tail -n 5 "$work/$name.log"; kill_job; return 1
  fi
  local pids
  if [ "$#" = 0 ]; then pids=$job; else pids=$(pgrep -P "$job" | tr '\n' ' '); fi
  busy_lines=$("$PY" "$(dirname "$0")/busy_threads.py" 2 $pids)
  echo "$busy_lines" | sed "s/^/  $name: pid /"
  kill_job
}
most_busy() { awk '{ if ($2 > m) m = $2 } END { print m + 0 }' <<<"$busy_lines"; }
ranks_seen() { grep -c . <<<"$busy_lines"; }

# 1 rank, no launcher (start_job runs "$MPIEXEC" ARGS... BINARY: env, no arguments).
MPIEXEC_SAVED=$MPIEXEC
extra=(--threads 0)
MPIEXEC=env sample np1 1
check "1 rank: its share is all $cores cores, no more busy threads" test "$(most_busy)" -le "$cores"
check "  the BLAS pool is sized to the share" grep -q "its thread pool sized to $cores" "$work/np1.log"
MPIEXEC=$MPIEXEC_SAVED
for np in 2 4; do
  share=$((cores / np)); [ "$share" -ge 1 ] || share=1
  sample "np$np" "$np" -np "$np" --oversubscribe --bind-to none
  check "$np ranks: $np ranks sampled" test "$(ranks_seen)" = "$np"
  check "  no rank has more than $share busy thread(s)" test "$(most_busy)" -le "$share"
  check "  the BLAS pool is sized to the share" grep -q "its thread pool sized to $share" "$work/np$np.log"
done
if [ "$cores" -ge 2 ]; then
  extra=(--threads "$cores")
  sample fight 2 -np 2 --bind-to none
  check "2 ranks told --threads $cores: the count sees the fight (more than 1 busy thread)" \
    test "$(most_busy)" -gt 1
  check "  and slimtrain warned at start-up" grep -q "ranks will fight for cores" "$work/fight.log"
fi
finish
