#!/usr/bin/env bash
# --activation-checkpointing layers against none, side by side: a 28M Qwen2 (LAYERS (4) layers,
# hidden 512, intermediate 1408, 8 heads over 2 key-value heads; bench/memory_plan/make.py) on
# batches of BATCH (8) x 512 tokens, fp32, STEPS (3) AdamW steps, np 1 x 2 threads, the two modes
# alternating REPS (2) times. Rank 0's peak resident memory over the steps and the memory plan of
# each, the losses (equal within 1e-6: the recomputation replays the forward), and the steady
# seconds a step:
#   RESULT memory_plan recompute=layers peak_gb=... none_peak_gb=... peak_ratio=...
#          planned_gb=... none_planned_gb=... same_losses=yes step_s_ratio=... cpu="..."
# Needs transformers to make the model (scripts/install-deps.sh --torch pip makes .torch-venv).
# Usage: bench/memory_plan/recompute.sh [build-dir]   Environment: LAYERS, BATCH, STEPS, REPS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
layers=${LAYERS:-4}
batch=${BATCH:-8}
steps=${STEPS:-3}
reps=${REPS:-2}
bench_name=memory_plan
. "$root/bench/lib.sh"
positive_ints "$layers" "$batch" "$steps" "$reps"
[ -n "$PY2" ] && "$PY2" -c 'import transformers' 2>/dev/null ||
  { echo "bench/$bench_name: no Python with transformers (scripts/install-deps.sh --torch pip makes .torch-venv)" >&2; exit 2; }
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
"$PY2" "$root/bench/memory_plan/make.py" "$work/model" "$layers" 512 hidden=512 intermediate=1408 \
  heads=8 kv_heads=2 >"$work/make.log" 2>&1 || { cat "$work/make.log" >&2; exit 1; }

for r in $(seq 1 "$reps"); do
  order=(none layers)
  [ $((r % 2)) = 0 ] && order=(layers none)
  for mode in "${order[@]}"; do
    out=$work/$mode.$r
    timeout 1800 mpirun -np 1 --bind-to none "$bin" train --data "$work/model/text.h5" \
      --model "hf:$work/model" --out "$out" --resume none --optimizer adamw --lr 1e-5 \
      --batch-size "$batch" --threads 2 --max-steps "$steps" --log-every 1 --eval-every 0 \
      --checkpoint-every 0 --final-split none --activation-checkpointing "$mode" >"$out.log" 2>&1 ||
      { echo "bench/$bench_name: --activation-checkpointing $mode failed:" >&2; tail -n 20 "$out.log" >&2; exit 1; }
    rm -rf "$out/checkpoints"
  done
done

"$PY2" - "$work" "$reps" "$cpu" "$layers" "$batch" <<'PYEOF'
import json, statistics, sys
work, reps, cpu, layers, batch = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]

def run(name):
    events = [json.loads(l) for l in open(f"{work}/{name}/metrics.jsonl")]
    done = [e for e in events if e.get("event") == "done"][-1]
    losses = [e["loss"] for e in events if e.get("event") == "train"]
    step_s = done["steady_seconds"] / done["steady_steps"] if done.get("steady_steps") else float("nan")
    m = done["memory"]
    return m["peak_resident_bytes"] / 1e9, m["planned_bytes"] / 1e9, losses, step_s

print(f"\n--activation-checkpointing layers against none: Qwen2 {layers} layers, hidden 512, batch "
      f"{batch} x 512 tokens, fp32, np 1, on {cpu}")
print(f"  {'rep':>3s} {'mode':7s} {'peak GB':>8s} {'plan GB':>8s} {'s/step':>7s}  losses")
rows = {"none": [], "layers": []}
for r in range(1, reps + 1):
    for mode in ("none", "layers"):
        peak, plan, losses, step_s = run(f"{mode}.{r}")
        rows[mode].append((peak, plan, losses, step_s))
        print(f"  {r:3d} {mode:7s} {peak:8.2f} {plan:8.2f} {step_s:7.2f}  {', '.join(f'{x:.5f}' for x in losses)}")
peak = {k: max(v[0] for v in rows[k]) for k in rows}
plan = {k: rows[k][0][1] for k in rows}
same = all(len(a[2]) == len(b[2]) and all(abs(x - y) <= 1e-6 * abs(x) for x, y in zip(a[2], b[2]))
           for a, b in zip(rows["none"], rows["layers"]))  # within 1e-6 relative
ratio = statistics.median(b[3] / a[3] for a, b in zip(rows["none"], rows["layers"]))
print(f"RESULT memory_plan recompute=layers peak_gb={peak['layers']:.2f} none_peak_gb={peak['none']:.2f} "
      f"peak_ratio={peak['layers'] / peak['none']:.3f} planned_gb={plan['layers']:.2f} "
      f"none_planned_gb={plan['none']:.2f} same_losses={'yes' if same else 'no'} "
      f"step_s_ratio={ratio:.3f} cpu=\"{cpu}\"")
PYEOF
