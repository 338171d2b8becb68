#!/usr/bin/env bash
# The memory plan against what a rank holds: a Qwen2 classifier at Qwen2.5-7B's widths (hidden
# 3584, intermediate 18944, 28/4 heads) with LAYERS (2) layers and a 32,000-token vocabulary
# (bench/memory_plan/make.py: about 580M parameters, random weights in sharded safetensors),
# trained STEPS (2) AdamW steps of batch 2 x 64 tokens in fp32 at each of the RUNS ("1:none
# 2:optimizer 2:gradients": ranks and --shard). For each: the plan printed at start-up (done
# event's memory.planned_bytes) beside rank 0's measured peak resident memory over the training
# steps (memory.peak_resident_bytes), and their ratio (1.0: exact; the issue's bound is 15%).
#   RESULT memory_plan np=2 shard=gradients planned_gb=... peak_gb=... plan_over_peak=... cpu="..."
# Needs transformers to make the model: scripts/install-deps.sh --torch pip (.torch-venv).
# Usage: bench/memory_plan/run.sh [build-dir]   Environment: STEPS, LAYERS, RUNS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
steps=${STEPS:-2}
layers=${LAYERS:-2}
runs=${RUNS:-1:none 2:optimizer 2:gradients}
bench_name=memory_plan
. "$root/bench/lib.sh"
. "$root/bench/memory_plan/wide.sh"
echo "bench/memory_plan: $(tail -n 1 "$work/make.log") at Qwen2.5-7B's widths, on $cpu"
printf '  %-4s %-10s %12s %12s %10s\n' np --shard "planned GB" "peak GB" plan/peak
results=()
for r in $runs; do
  np=${r%%:*} shard=${r#*:}
  out=$work/run-$np-$shard
  wide_train "$np" "$shard" "$out"
  read -r planned peak ratio < <("$PY2" - "$out/metrics.jsonl" <<'PYEOF'
import json, sys
m = [e for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "done"][-1]["memory"]
print("%.2f %.2f %.3f" % (m["planned_bytes"] / 1e9, m["peak_resident_bytes"] / 1e9,
                          m["planned_bytes"] / m["peak_resident_bytes"]))
PYEOF
  )
  printf '  %-4s %-10s %12s %12s %10s\n' "$np" "$shard" "$planned" "$peak" "$ratio"
  results+=("RESULT memory_plan np=$np shard=$shard layers=$layers planned_gb=$planned peak_gb=$peak plan_over_peak=$ratio cpu=\"$cpu\"")
done
printf '%s\n' "${results[@]}"
