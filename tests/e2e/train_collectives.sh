#!/usr/bin/env bash
# The collectives of a training step, counted from outside the program: libslimtrain_mpi_count
# (tests/support/mpi_count.c) interposes MPI's collectives through PMPI and writes each rank's
# counts at MPI_Finalize. Two runs that differ only in --max-steps (8 and 16), logging every step
# and with --checkpoint-minutes on: the difference is 8 steps' worth, 3 collectives per step on
# this CPU data plane (the one gradient bucket, the fingerprint check before it and the step's
# control reduction; on NCCL the check is not needed) and one all-gather per log window (every
# rank's step times, for stragglers), nothing else. With --log-every 4 the same 8 steps add two
# all-gathers: the gather is per log window, not per step. The start-up measurements are pinned
# (--floor-bandwidth, --chunk-mb): the bandwidth probe stops at the first all-reduce size that
# takes 50 ms, so on a loaded machine it issues fewer, and the difference of two runs no longer
# counts steps alone (CI saw 11 all-reduces for 8 steps).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
: "${MPI_COUNT_LIB:?run through ctest, which sets MPI_COUNT_LIB}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
train_data "$work" || exit 1

counted() {  # counted STEPS [LOG_EVERY]: trains STEPS steps at np 2 with the interposer
  local name=$1${2:+-log$2}
  mkdir -p "$work/count-$name"
  expect_rc 0 timeout 120 "$MPIEXEC" -np 2 -x LD_PRELOAD="$MPI_COUNT_LIB" \
    -x SLIMTRAIN_MPI_COUNT_DIR="$work/count-$name" "$S" train --data "$work/data.h5" \
    --out "$work/run-$name" --model mlp --mlp-widths 32,16 --batch-size 16 --threads 1 \
    --log-every "${2:-1}" --floor-bandwidth 1000 --chunk-mb 4 --checkpoint-minutes 1000 --eval-every 0 --max-steps "$1" --resume none
}
count() {  # count STEPS RANK KIND
  awk -v k="$3" '$1 == k {print $2}' "$work/count-$1/rank-$2.txt"
}

check "8 steps under the counter" counted 8
check "16 steps under the counter" counted 16
check "8 and 16 steps logging every 4th" eval 'counted 8 4 && counted 16 4'
check "  one gradient bucket" contains "gradient buckets: 1 "
check "  logging every step" json_is "$(events "$work/run-16" train | tail -1)" 'e["step"] == 16'
for rank in 0 1; do
  for kind in allreduce bcast barrier allgather other; do
    echo "  rank $rank $kind: $(count 8 $rank $kind) in 8 steps, $(count 16 $rank $kind) in 16"
  done
  per_step=$(( ($(count 16 $rank allreduce) - $(count 8 $rank allreduce)) / 8 ))
  check "rank $rank: 3 all-reduces per step (bucket + check before it + control reduction)" \
    test "$(( $(count 16 $rank allreduce) - $(count 8 $rank allreduce) ))" -eq 24
  check "rank $rank: one all-gather per log window" \
    test "$(( $(count 16 $rank allgather) - $(count 8 $rank allgather) ))" -eq 8
  check "rank $rank: two for 8 steps logged every 4th" \
    test "$(( $(count 16-log4 $rank allgather) - $(count 8-log4 $rank allgather) ))" -eq 2
  check "rank $rank: no other collective per step" test \
    "$(( $(count 16 $rank bcast) + $(count 16 $rank barrier) + $(count 16 $rank other) ))" \
    -eq "$(( $(count 8 $rank bcast) + $(count 8 $rank barrier) + $(count 8 $rank other) ))"
  echo "  rank $rank: $per_step all-reduce(s) per step"
done
finish
