#!/usr/bin/env bash
# --shard optimizer and gradients (ZeRO-1, 2) against none at np 2 x 1 thread: cnn-small (batch
# 64, SGD with momentum) and the 36.8 M-parameter mlp (--mlp-widths 4096,4096,4096, batch 32,
# AdamW), where the optimizer state is most of the memory. Every configuration runs REPS times,
# the three modes alternating within each repetition (the order reversed every other one); the
# table shows every run's steady-state samples/s (the done event's, the warm-up window left out)
# and the RESULT lines the medians' ratios to none, target 0.95. A fourth mode, gather, is
# --shard gradients --overlap-gather on (the weights all-gathered during the next forward, each
# layer waiting for its own), measured against gradients with the gather after the step.
#   RESULT train shard model=M mode=optimizer|gradients none_sps=... sps=... ratio=... target=0.95
#   RESULT train shard_gather model=M mode=gradients after_sps=... during_sps=... ratio=...
# Usage: bench/train/shard.sh [build-dir]
# Environment: REPS (3), CNN_STEPS (300), MLP_STEPS (40), WARMUP (20).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
reps=${REPS:-3}
cnn_steps=${CNN_STEPS:-300}
mlp_steps=${MLP_STEPS:-40}
warmup=${WARMUP:-20}
bench_name=train
. "$root/bench/lib.sh"
positive_ints "$reps" "$cnn_steps" "$mlp_steps" "$warmup"
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')

recipe() {
  case $1 in
    cnn-small) echo "--model cnn-small --batch-size 64 --optimizer sgd --lr 0.05 --momentum 0.9 --max-steps $((cnn_steps + warmup))" ;;
    mlp) echo "--model mlp --mlp-widths 4096,4096,4096 --batch-size 32 --optimizer adamw --lr 0.0005 --max-steps $((mlp_steps + warmup))" ;;
  esac
}

started=$(date +%s)
for r in $(seq 1 "$reps"); do
  for m in cnn-small mlp; do
    order=(none optimizer gradients gather)
    [ $((r % 2)) = 0 ] && order=(gather gradients optimizer none)
    for mode in "${order[@]}"; do
      run=$work/$m.$mode.$r
      shard=(--shard "$mode")
      [ "$mode" = gather ] && shard=(--shard gradients --overlap-gather on)
      # shellcheck disable=SC2046 # the recipe is words
      if ! mpirun -np 2 "$bin" train --data "$data" --out "$run" --resume none --threads 1 \
        --schedule constant --eval-every 0 --checkpoint-every 0 --final-split none \
        --log-every "$warmup" "${shard[@]}" $(recipe "$m") >"$run.log" 2>&1; then
        echo "bench/train shard: $m --shard $mode (repetition $r) failed:" >&2
        tail -n 20 "$run.log" >&2
        exit 1
      fi
    done
  done
done
echo "all runs took $(($(date +%s) - started)) s"

"$PY" - "$work" "$reps" "$cpu" <<'PYEOF'
import json, statistics, sys
work, reps, cpu = sys.argv[1], int(sys.argv[2]), sys.argv[3]
modes = ["none", "optimizer", "gradients", "gather"]

def sps(run):
    for line in open(f"{work}/{run}/metrics.jsonl"):
        e = json.loads(line)
        if e["event"] == "done":
            return float(e["samples_per_s"])

print(f"\n--shard at 2 ranks x 1 thread on {cpu}: steady-state samples/s per run")
print(f"  {'model':10s}{'rep':>4s}" + "".join(f"{m:>11s}" for m in modes))
results = []
for model in ("cnn-small", "mlp"):
    runs = {m: [sps(f"{model}.{m}.{r}") for r in range(1, reps + 1)] for m in modes}
    for r in range(reps):
        print(f"  {model:10s}{r + 1:>4d}" + "".join(f"{runs[m][r]:11.1f}" for m in modes))
    med = {m: statistics.median(runs[m]) for m in modes}
    print(f"  {model:10s}{'med':>4s}" + "".join(f"{med[m]:11.1f}" for m in modes))
    name = "cnn-small" if model == "cnn-small" else "mlp-4096x4096x4096"
    for m in ("optimizer", "gradients"):
        results.append(f"RESULT train shard model={name} ranks=2 mode={m} none_sps={med['none']:.1f} "
                       f"sps={med[m]:.1f} ratio={med[m] / med['none']:.3f} target=0.95")
    results.append(f"RESULT train shard_gather model={name} ranks=2 mode=gradients "
                   f"after_sps={med['gradients']:.1f} during_sps={med['gather']:.1f} "
                   f"ratio={med['gather'] / med['gradients']:.3f}")
print()
print("\n".join(results))
PYEOF
