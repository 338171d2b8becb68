#!/usr/bin/env bash
# Evaluation at many classes (issue 60): the statistics are linear in the classes (per class its
# true positives, predictions and samples), the C x C matrix kept only up to
# --confusion-max-classes. For each class count: a file of 8 features per sample (one training
# sample per class, TEST samples to evaluate), an mlp (--mlp-widths 16) trained one epoch at
# np 2, then `slimtrain eval` at np 2, REPEAT times; from its log line the wall time of the
# evaluation, rank 0's peak resident memory and the bytes each rank reduced. The peer is what the
# C x C matrix would have cost: 8 C^2 bytes per rank to reduce, twice that to hold.
#   RESULT eval_classes classes=C np=2 samples=N seconds=... samples_per_s=... peak_gb=...
#          bytes_reduced=... matrix_gb=8C^2/1e9 target_peak_gb=1
# Usage: bench/eval/run.sh [build-dir]
# Environment: CLASSES ("1000 20000 100000"), TEST (20000), REPEAT (3), BATCH (512).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
classes_list=${CLASSES:-1000 20000 100000}
test_n=${TEST:-20000}
repeat=${REPEAT:-3}
batch=${BATCH:-512}
bench_name=eval
. "$root/bench/lib.sh"
positive_ints $classes_list "$test_n" "$repeat" "$batch"
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(getconf _NPROCESSORS_ONLN) cores"
printf '%8s %7s %9s %12s %9s %14s %10s\n' classes samples seconds samples/s peakGB bytes_reduced matrixGB
results=()
for classes in $classes_list; do
  data=$work/c$classes.h5
  "$PY" "$root/tests/e2e/many_classes.py" "$data" "$classes" "$classes" "$test_n"
  mpirun -np 2 "$bin" train --data "$data" --model mlp --mlp-widths 16 --epochs 1 \
    --batch-size "$batch" --final-split none --out "$work/run$classes" --resume none \
    >"$work/train$classes.log" 2>&1 || { echo "bench/eval: training at $classes classes failed:" >&2; tail "$work/train$classes.log" >&2; exit 1; }
  lines=()
  for _ in $(seq "$repeat"); do
    log=$work/eval$classes.log
    mpirun -np 2 "$bin" eval --data "$data" --checkpoint "$work/run$classes" --split test \
      --batch-size "$batch" >"$log" 2>&1 || { echo "bench/eval: eval at $classes classes failed:" >&2; tail "$log" >&2; exit 1; }
    lines+=("$(grep -o 'evaluated .* bytes reduced' "$log")")
  done
  # The median run by time: "evaluated N samples ... in S s (R samples/s); peak G GB ..., B bytes"
  line=$(printf '%s\n' "${lines[@]}" | sort -t" " -k12 -n | sed -n "$(((repeat + 1) / 2))p")
  read -r samples seconds rate peak bytes < <(sed -E 's/^evaluated ([0-9]+) samples .* in ([0-9.]+) s \(([0-9]+) samples\/s\); peak ([0-9.]+) GB .*, ([0-9]+) bytes reduced$/\1 \2 \3 \4 \5/' <<<"$line")
  matrix=$(awk -v c="$classes" 'BEGIN { printf "%.2f", 8 * c * c / 1e9 }')
  printf '%8s %7s %9s %12s %9s %14s %10s\n' "$classes" "$samples" "$seconds" "$rate" "$peak" "$bytes" "$matrix"
  results+=("RESULT eval_classes classes=$classes np=2 samples=$samples seconds=$seconds samples_per_s=$rate peak_gb=$peak bytes_reduced=$bytes matrix_gb=$matrix target_peak_gb=1")
done
printf '%s\n' "${results[@]}"
