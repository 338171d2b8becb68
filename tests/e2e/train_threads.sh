#!/usr/bin/env bash
# The thread rule (docs/training-cpu.md, "Threads"): with N ranks on a node, a rank's LibTorch intra-op
# threads, OpenMP and the BLAS's own pool together use the rank's share of the cores (--threads
# 0). At 1 rank (no launcher: the whole machine), 2 and 4 ranks (mpirun --bind-to none, so the
# share comes from slimtrain's own split, not from a binding), every rank's thread states are read
# from /proc/PID/task every 10 ms over 3 s of training (busy_threads.py): no rank may have more
# compute threads runnable at once than its share in more than 30% of the samples (a thread waking
# or handing over work overlaps briefly: 0.00-0.05 measured). slimtrain's own threads (st-*) are
# counted apart: the communicator reduces gradients while backward runs, so at 2 ranks st-comm-data
# is runnable beside the compute thread in 0.15-0.33 of the samples; counting every thread, a rank
# may be over its share in at most 60% (a spinning helper thread would be near 100%). RUN_SERIAL:
# other tests beside it keep woken threads waiting for a core. A run told --threads 2 at 2 ranks
# shows what a fight looks like (2 compute threads runnable most of the time) and gets the
# start-up warning.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resume_lib.sh"
unset OMP_NUM_THREADS OPENBLAS_NUM_THREADS  # what a user's shell has: nothing set
work=$(mktemp -d)
trap 'kill -9 -- "-$job" 2>/dev/null; rm -rf "$work"' EXIT
make_data "$work" 28 4096 || { echo "cannot make the test data"; exit 1; }
cores=$(nproc)
job=

# sample NAME NP SHARE [LAUNCHER-ARGS...]: starts the job, waits for its first train event, prints
# busy_threads.py's lines for its ranks (kept in $busy_lines), then kills it.
sample() {
  local name=$1 np=$2 share=$3; shift 3
  start_job "$work/$name.log" "$@" "$SLIMTRAIN_BIN" train --data "$work/data.h5" \
    --out "$work/$name" --resume none --model cnn-small --batch-size 64 --max-steps 1000000 \
    --eval-every 0 --checkpoint-every 0 --final-split none --log-every 10 "${extra[@]}"
  if ! wait_until 60 grep -qs '"event":"train"' "$work/$name/metrics.jsonl"; then
    echo "FAIL $name: no train event within 60 s"; tail -n 5 "$work/$name.log"; kill_job; return 1
  fi
  local pids
  if [ "$#" = 0 ]; then pids=$job; else pids=$(pgrep -P "$job" | tr '\n' ' '); fi
  busy_lines=$("$PY" "$(dirname "$0")/busy_threads.py" "$share" 3 $pids)
  echo "$busy_lines" | sed "s/^/  $name: pid /"
  kill_job
}
# worst_over [COLUMN]: the largest fraction of samples in which a rank had more runnable threads
# than its share, in hundredths: compute threads (column 2, the default) or every thread (3).
worst_over() {
  awk -v c="${1:-2}" '{ v = int($c * 100 + 0.5); if (v > m) m = v } END { print m + 0 }' <<<"$busy_lines"
}
ranks_seen() { grep -c . <<<"$busy_lines"; }

# 1 rank, no launcher (start_job runs "$MPIEXEC" ARGS... BINARY: env, no arguments).
MPIEXEC_SAVED=$MPIEXEC
extra=(--threads 0)
MPIEXEC=env sample np1 1 "$cores"
check "1 rank: its share is all $cores cores, no more compute threads runnable at once" \
  test "$(worst_over)" -le 30
check "  the BLAS pool is sized to the share" grep -q "its thread pool sized to $cores" "$work/np1.log"
MPIEXEC=$MPIEXEC_SAVED
for np in 2 4; do
  share=$((cores / np)); [ "$share" -ge 1 ] || share=1
  sample "np$np" "$np" "$share" -np "$np" --oversubscribe --bind-to none
  check "$np ranks: $np ranks sampled" test "$(ranks_seen)" = "$np"
  check "  no rank has more than $share compute thread(s) runnable at once" test "$(worst_over)" -le 30
  check "  slimtrain's own threads overlap compute in at most 60% of the samples" \
    test "$(worst_over 3)" -le 60
  check "  the BLAS pool is sized to the share" grep -q "its thread pool sized to $share" "$work/np$np.log"
done
if [ "$cores" -ge 2 ]; then
  extra=(--threads "$cores")
  sample fight 2 1 -np 2 --bind-to none
  check "2 ranks told --threads $cores: the count sees the fight (over half the samples)" \
    test "$(worst_over)" -gt 50
  check "  and slimtrain warned at start-up" grep -q "ranks will fight for cores" "$work/fight.log"
fi
finish
