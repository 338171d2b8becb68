#!/usr/bin/env bash
# Memory per rank for a model whose state outweighs its activations: the 36.8 M-parameter mlp
# (--mlp-widths 4096,4096,4096 on Fashion-MNIST's 784 inputs) with AdamW, batch 32, at np 1, 2
# and 4 (4 oversubscribe two cores). Per run, from rank 0's done event (ranks hold the same):
# the bytes of weights, gradients (the gradient buckets, which are the .grad tensors) and
# optimizer state counted from the tensors, and the peak resident memory since training started
# above the same process before the model existed, less the training split the loader holds in
# memory (47 MB of Fashion-MNIST on every rank; not training state). Every rank holds the whole state today:
# --shard (ZeRO-1/2, issue 29) is not built yet, so only that mode is measured.
#   RESULT memory np=N shard=none state_bytes=... optimizer_bytes=... peak_above_baseline=...
#          data_bytes=... ratio=(peak_above_baseline - data_bytes)/state_bytes target=1.10
# Usage: bench/memory/run.sh [build-dir]
# Environment: STEPS (20), WIDTHS (4096,4096,4096), BATCH (32), NPS ("1 2 4").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
steps=${STEPS:-20}
widths=${WIDTHS:-4096,4096,4096}
batch=${BATCH:-32}
nps=${NPS:-1 2 4}
bench_name=memory
. "$root/bench/lib.sh"
positive_ints "$steps" "$batch" $nps

printf '%3s %-6s %10s %10s %10s %10s %10s %10s %10s %6s\n' np shard weightsMB gradsMB optimMB \
  stateMB baseMB dataMB peak+MB ratio
results=()
for np in $nps; do
  run=$work/np$np
  if ! mpirun -np "$np" --oversubscribe "$bin" train --data "$data" --out "$run" --resume none \
    --model mlp --mlp-widths "$widths" --optimizer adamw --lr 0.001 --batch-size "$batch" \
    --threads 1 --max-steps "$steps" --eval-every 0 --final-split none --log-every "$steps" \
    >"$run.log" 2>&1; then
    echo "bench/memory: the run at np $np failed:" >&2
    tail -20 "$run.log" >&2
    exit 1
  fi
  line=$("$PY" - "$run/metrics.jsonl" "$np" <<'EOF'
import json, sys
done = [json.loads(l) for l in open(sys.argv[1]) if '"done"' in l][-1]
m = done["memory"]
mb = lambda b: b / 2**20
ratio = (m["peak_above_baseline_bytes"] - m["data_bytes"]) / m["state_bytes"]
print(f'{sys.argv[2]:>3} {"none":<6} {mb(m["weights_bytes"]):10.1f} {mb(m["gradient_bytes"]):10.1f} '
      f'{mb(m["optimizer_bytes"]):10.1f} {mb(m["state_bytes"]):10.1f} '
      f'{mb(m["baseline_resident_bytes"]):10.1f} {mb(m["data_bytes"]):10.1f} '
      f'{mb(m["peak_above_baseline_bytes"]):10.1f} {ratio:6.3f}')
print(f'RESULT memory np={sys.argv[2]} shard=none state_bytes={m["state_bytes"]} '
      f'weights_bytes={m["weights_bytes"]} gradient_bytes={m["gradient_bytes"]} '
      f'optimizer_bytes={m["optimizer_bytes"]} peak_above_baseline={m["peak_above_baseline_bytes"]} '
      f'data_bytes={m["data_bytes"]} ratio={ratio:.3f} target=1.10')
EOF
)
  head -n 1 <<<"$line"
  results+=("$(tail -n 1 <<<"$line")")
done
printf '%s\n' "${results[@]}"
