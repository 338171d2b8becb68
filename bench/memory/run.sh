#!/usr/bin/env bash
# Memory per rank for a model whose state outweighs its activations: the 36.8 M-parameter mlp
# (--mlp-widths 4096,4096,4096 on Fashion-MNIST's 784 inputs) with AdamW, batch 32, at np 1, 2
# and 4 (4 oversubscribe two cores), with each --shard (none, optimizer, gradients: ZeRO 0-2).
# Per run, from rank 0's done event (every rank's shard has the same size): the bytes of weights,
# gradients (the gradient buckets, which are the .grad tensors; with --shard gradients this rank's
# shard of them) and optimizer state counted from the tensors, and the peak resident memory since
# training started above the same process before the model existed, less the training split the
# loader holds in memory (47 MB of Fashion-MNIST on every rank; not training state).
#   RESULT memory np=N shard=S state_bytes=... optimizer_bytes=... peak_above_baseline=...
#          data_bytes=... ratio=(peak_above_baseline - data_bytes)/state_bytes target=1.10
#   RESULT memory optimizer_share np=N shard=S share=optimizer_bytes/(none's/N) target=1.01
#   RESULT memory state_share np=4 shard=gradients share=state_bytes/none's target=0.45
#   RESULT memory checkpoint np=N shard=S peak_above_baseline=... ratio=...: the same peak once
#          the run's final checkpoint is written (rank 0's host copy of the weights, each writer's
#          copy of its optimizer state); no target: what a checkpoint costs beyond training.
# Usage: bench/memory/run.sh [build-dir]
# Environment: STEPS (20), WIDTHS (4096,4096,4096), BATCH (32), NPS ("1 2 4"),
#   SHARDS ("none optimizer gradients"; none must come first).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
steps=${STEPS:-20}
widths=${WIDTHS:-4096,4096,4096}
batch=${BATCH:-32}
nps=${NPS:-1 2 4}
read -r -a shards <<<"${SHARDS:-none optimizer gradients}"
bench_name=memory
. "$root/bench/lib.sh"
positive_ints "$steps" "$batch" $nps

# ratio: (peak above baseline - data) / state; optim/N: optimizer bytes / (none's / N);
# state/none: training-state bytes / none's at the same np.
printf '%3s %-9s %10s %10s %10s %10s %10s %10s %10s %6s %6s %6s %6s\n' np shard weightsMB gradsMB \
  optimMB stateMB baseMB dataMB peak+MB ratio optim/N state/none ckpt
results=()
for np in $nps; do
  for shard in "${shards[@]}"; do
    run=$work/np$np-$shard
    if ! mpirun -np "$np" --oversubscribe "$bin" train --data "$data" --out "$run" --resume none \
      --model mlp --mlp-widths "$widths" --optimizer adamw --lr 0.001 --batch-size "$batch" \
      --threads 1 --max-steps "$steps" --eval-every 0 --final-split none --log-every "$steps" \
      --shard "$shard" >"$run.log" 2>&1; then
      echo "bench/memory: the run at np $np with --shard $shard failed:" >&2
      tail -20 "$run.log" >&2
      exit 1
    fi
    line=$("$PY" - "$run/metrics.jsonl" "$np" "$shard" "$work/np$np-none/metrics.jsonl" <<'EOF'
import json, sys
def memory(path):
    return [json.loads(l) for l in open(path) if '"done"' in l][-1]["memory"]
m = memory(sys.argv[1])
np_, shard = int(sys.argv[2]), sys.argv[3]
none = memory(sys.argv[4])
mb = lambda b: b / 2**20
ratio = (m["peak_above_baseline_bytes"] - m["data_bytes"]) / m["state_bytes"]
share = m["optimizer_bytes"] / (none["optimizer_bytes"] / np_)
state_share = m["state_bytes"] / none["state_bytes"]
ckpt = (m["checkpoint_peak_above_baseline_bytes"] - m["data_bytes"]) / m["state_bytes"]
print(f'{np_:>3} {shard:<9} {mb(m["weights_bytes"]):10.1f} {mb(m["gradient_bytes"]):10.1f} '
      f'{mb(m["optimizer_bytes"]):10.1f} {mb(m["state_bytes"]):10.1f} '
      f'{mb(m["baseline_resident_bytes"]):10.1f} {mb(m["data_bytes"]):10.1f} '
      f'{mb(m["peak_above_baseline_bytes"]):10.1f} {ratio:6.3f} '
      + (f'{"-":>6} {"-":>6}' if shard == "none" else f'{share:6.3f} {state_share:6.3f}')
      + f' {ckpt:6.3f}')
print(f'RESULT memory np={np_} shard={shard} state_bytes={m["state_bytes"]} '
      f'weights_bytes={m["weights_bytes"]} gradient_bytes={m["gradient_bytes"]} '
      f'optimizer_bytes={m["optimizer_bytes"]} peak_above_baseline={m["peak_above_baseline_bytes"]} '
      f'data_bytes={m["data_bytes"]} ratio={ratio:.3f} target=1.10')
if shard != "none":
    print(f'RESULT memory optimizer_share np={np_} shard={shard} share={share:.4f} target=1.01')
print(f'RESULT memory checkpoint np={np_} shard={shard} '
      f'peak_above_baseline={m["checkpoint_peak_above_baseline_bytes"]} ratio={ckpt:.3f}')
if shard == "gradients" and np_ == 4:
    print(f'RESULT memory state_share np=4 shard=gradients share={state_share:.3f} target=0.45')
EOF
)
    head -n 1 <<<"$line"
    while IFS= read -r l; do results+=("$l"); done < <(tail -n +2 <<<"$line")
  done
done
printf '%s\n' "${results[@]}"
