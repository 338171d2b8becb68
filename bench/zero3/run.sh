#!/usr/bin/env bash
# --shard parameters (ZeRO-3) against --shard gradients (ZeRO-2) on this machine: the Qwen2
# classifier of bench/memory_plan (Qwen2.5-7B's widths, hidden 3584, intermediate 18944, 28/4
# heads, LAYERS (2) layers, vocabulary cut to 32,000: about 580M parameters, random weights in
# save_pretrained shards), STEPS (3) AdamW steps of batch 2 x 64 tokens in fp32 at np 1, 2 and 4
# with each mode (RUNS; --overlap-gather auto: one layer at a time on CPU). For each: rank 0's
# peak resident memory over the training steps beside
# the memory plan's figure, the peak while loading (start-up) beside its target (what the process
# held before, the rank's fp32 shard and the largest tensor), the samples/s, and for
# --shard parameters DeepSpeed's own estimate for ZeRO-3 without offload
# (deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs: 4 bytes of the largest
# layer + 18 bytes a parameter / GPUs, mixed precision's count; fp32 here needs 16).
#   RESULT zero3 np=N shard=M peak_gb=... planned_gb=... plan_over_peak=... loading_peak_gb=...
#          loading_bound_gb=... loading_within=yes|no samples_per_s=... deepspeed_gb=... cpu="..."
#   RESULT zero3_summary np4_peak_ratio=... target=0.65 np2_slowdown=...
# Needs transformers to make the model: scripts/install-deps.sh --torch pip (.torch-venv).
# Usage: bench/zero3/run.sh [build-dir]   Environment: STEPS, LAYERS, RUNS ("1:gradients ...").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
steps=${STEPS:-3}
layers=${LAYERS:-2}
runs=${RUNS:-1:gradients 1:parameters 2:gradients 2:parameters 4:gradients 4:parameters}
bench_name=zero3
. "$root/bench/lib.sh"
. "$root/bench/memory_plan/wide.sh"
# DeepSpeed's inputs: every parameter, and the largest module's own (its largest layer).
read -r total largest tensor < <("$PY2" - "$work/model" <<'PYEOF'
import json, sys
from safetensors import safe_open
index = json.load(open(sys.argv[1] + "/model.safetensors.index.json"))
total, modules, tensor = 0, {}, 0
for f in sorted(set(index["weight_map"].values())):
    with safe_open(f"{sys.argv[1]}/{f}", "pt") as t:
        for k in t.keys():
            n = 1
            for d in t.get_slice(k).get_shape():
                n *= d
            total += n
            tensor = max(tensor, n)
            owner = k.rsplit(".", 1)[0]
            modules[owner] = modules.get(owner, 0) + n
print(total, max(modules.values()), tensor)
PYEOF
)
echo "bench/zero3: $(tail -n 1 "$work/make.log") at Qwen2.5-7B's widths ($total parameters, the largest layer $largest), on $cpu, $(getconf _NPROCESSORS_ONLN) cores"
printf '  %-3s %-10s %9s %11s %9s %12s %15s %10s %13s\n' np --shard "peak GB" "planned GB" plan/peak "loading GB" "shard+tensor GB" samples/s "DeepSpeed GB"
results=()
declare -A peak_of sps_of
for r in $runs; do
  np=${r%%:*} shard=${r#*:}
  out=$work/run-$np-$shard
  if ! (wide_train "$np" "$shard" "$out" --log-every 1); then
    why=$(grep -o 'exited on signal [0-9]* ([A-Za-z]*)' "$out.log" | head -n 1 || true)
    printf '  %-3s %-10s failed: %s\n' "$np" "$shard" "${why:-see its log}"
    results+=("RESULT zero3 np=$np shard=$shard layers=$layers failed=\"${why:-error}\" cpu=\"$cpu\"")
    rm -rf "$out"
    continue
  fi
  read -r peak planned ratio loading sps baseline < <("$PY2" - "$out/metrics.jsonl" <<'PYEOF'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1])]
done = [e for e in events if e.get("event") == "done"][-1]
m = done["memory"]
loading = (m["baseline_resident_bytes"] + m["loading_peak_above_baseline_bytes"]) / 1e9
print("%.2f %.2f %.3f %.2f %.2f %.2f" % (m["peak_resident_bytes"] / 1e9, m["planned_bytes"] / 1e9,
      m["planned_bytes"] / m["peak_resident_bytes"], loading, done["samples_per_s"],
      m["baseline_resident_bytes"] / 1e9))
PYEOF
  )
  # The loading target: what the process held before, its shard (fp32) and one tensor more.
  bound=$(awk -v b="$baseline" -v t="$total" -v l="$tensor" -v n="$np" 'BEGIN { printf "%.2f", b + 4 * (t / n + l) / 1e9 }')
  within=$(awk -v a="$loading" -v b="$bound" 'BEGIN { print (a <= b ? "yes" : "no") }')
  deepspeed=-
  [ "$shard" = parameters ] &&
    deepspeed=$(awk -v t="$total" -v l="$largest" -v n="$np" 'BEGIN { printf "%.2f", (4 * l + 18 * t / n) / 1e9 }')
  printf '  %-3s %-10s %9s %11s %9s %12s %15s %10s %13s\n' "$np" "$shard" "$peak" "$planned" "$ratio" "$loading" "$bound ($within)" "$sps" "$deepspeed"
  peak_of[$r]=$peak sps_of[$r]=$sps
  results+=("RESULT zero3 np=$np shard=$shard layers=$layers peak_gb=$peak planned_gb=$planned plan_over_peak=$ratio loading_peak_gb=$loading loading_bound_gb=$bound loading_within=$within samples_per_s=$sps deepspeed_gb=$deepspeed cpu=\"$cpu\"")
done
printf '%s\n' "${results[@]}"
if [ -n "${peak_of[4:gradients]:-}" ] && [ -n "${peak_of[4:parameters]:-}" ] &&
  [ -n "${sps_of[2:gradients]:-}" ] && [ -n "${sps_of[2:parameters]:-}" ]; then
  awk -v a="${peak_of[4:parameters]}" -v b="${peak_of[4:gradients]}" -v p="${sps_of[2:parameters]}" \
    -v g="${sps_of[2:gradients]}" 'BEGIN { printf "RESULT zero3_summary np4_peak_ratio=%.3f target=0.65 np2_slowdown=%.3f\n", a / b, g / p }'
fi
