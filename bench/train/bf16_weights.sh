#!/usr/bin/env bash
# --weights bf16 against bf16 autocast (--precision bf16 with float32 weights) on this CPU: the mlp
# 2048x2048 and vit-tiny on Fashion-MNIST, np 2 x 1 thread, EPOCHS (1) epochs, REPS (2) seeds, the
# two modes alternating within each seed. Steady samples/s, rank 0's peak resident memory and
# the final test accuracy per run; RESULT lines give the median speed ratio (bf16 weights over
# autocast) and the mean accuracies:
#   RESULT train bf16_weights model=mlp speed_ratio=... autocast_accuracy=... weights_accuracy=...
#          autocast_peak_gb=... weights_peak_gb=... cpu="..."
# Usage: bench/train/bf16_weights.sh [build-dir]. Needs a CPU with native bf16.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
epochs=${EPOCHS:-1}
reps=${REPS:-2}
read -r -a models <<<"${MODELS:-mlp vit-tiny}"
bench_name=train
. "$root/bench/lib.sh"
positive_ints "$epochs" "$reps"
if ! grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo; then
  echo "bench/train bf16_weights: this CPU has no native bf16 (avx512_bf16 or amx_bf16): nothing to compare"
  echo "RESULT train bf16_weights native=no"
  exit 0
fi
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')

recipe() {
  case $1 in
    mlp) echo "--model mlp --mlp-widths 2048,2048 --batch-size 256 --optimizer adamw --lr 0.001" ;;
    vit-tiny) echo "--model vit-tiny --batch-size 64 --optimizer adamw --lr 0.001 --weight-decay 0.05" ;;
    *) echo "bench/train bf16_weights: unknown model $1" >&2; exit 2 ;;
  esac
}
mode_args() { [ "$1" = weights ] && echo "--precision bf16 --weights bf16" || echo "--precision bf16"; }

for r in $(seq 1 "$reps"); do
  for m in "${models[@]}"; do
    order=(autocast weights)
    [ $((r % 2)) = 0 ] && order=(weights autocast)
    for p in "${order[@]}"; do
      # shellcheck disable=SC2046 # the recipe is words
      if ! mpirun -np 2 "$bin" train --data "$data" --out "$work/$m.$p.$r" --resume none \
        --threads 1 --epochs "$epochs" --seed "$r" $(mode_args "$p") --eval-every 0 \
        --checkpoint-every 0 --final-split test --log-every 100 $(recipe "$m") \
        >"$work/$m.$p.$r.log" 2>&1; then
        echo "bench/train bf16_weights: $m $p (seed $r) failed:" >&2
        tail -n 20 "$work/$m.$p.$r.log" >&2
        exit 1
      fi
    done
  done
done

"$PY" - "$work" "$reps" "$epochs" "$cpu" "${models[@]}" <<'PYEOF'
import json, statistics, sys
work, reps, epochs, cpu = sys.argv[1:5]
models, reps = sys.argv[5:], int(reps)

def done(run):
    events = [json.loads(l) for l in open(f"{work}/{run}/metrics.jsonl")]
    d = [e for e in events if e["event"] == "done"][-1]
    return (float(d["samples_per_s"]), float(d["final"]["accuracy"]),
            d["memory"]["peak_resident_bytes"] / 1e9)

print(f"\n--weights bf16 against bf16 autocast on {cpu}, 2 ranks x 1 thread, {epochs} epoch(s), "
      f"{reps} seeds: samples/s (steady), rank 0's peak GB, test accuracy")
print(f"  {'model':10s}{'seed':>5s}{'autocast':>10s}{'weights':>10s}{'ratio':>8s}"
      f"{'peak GB':>9s}{'peak GB':>9s}{'acc':>8s}{'acc':>8s}")
for m in models:
    ratios, acc_a, acc_w, peak_a, peak_w = [], [], [], [], []
    for r in range(1, reps + 1):
        sa, aa, pa = done(f"{m}.autocast.{r}")
        sw, aw, pw = done(f"{m}.weights.{r}")
        ratios.append(sw / sa)
        acc_a.append(aa); acc_w.append(aw); peak_a.append(pa); peak_w.append(pw)
        print(f"  {m:10s}{r:5d}{sa:10.0f}{sw:10.0f}{sw / sa:8.3f}{pa:9.3f}{pw:9.3f}{aa:8.4f}{aw:8.4f}")
    print(f"RESULT train bf16_weights model={m} speed_ratio={statistics.median(ratios):.3f} "
          f"autocast_accuracy={statistics.fmean(acc_a):.4f} weights_accuracy={statistics.fmean(acc_w):.4f} "
          f"autocast_peak_gb={max(peak_a):.3f} weights_peak_gb={max(peak_w):.3f} cpu=\"{cpu}\"")
PYEOF
