#!/usr/bin/env bash
# slimtrain's text classifiers against a PyTorch DDP (gloo) peer (bench/train/text_peer.py) on
# the text demo's data (scripts/text-data.sh: eight categories of the fortunes package), same
# model, tokenized file and recipe: np 2 x 1 thread x batch 64, AdamW, cosine to 0, no weight
# decay, lengths grouped (--group-by-length / the peer's HuggingFace-style grouping).
#   text-bow:          20 epochs, lr 0.01, --text-dim 64 (the peer: nn.EmbeddingBag, mean)
#   text-transformer:  5 epochs, lr 0.001, --text-dim 64, depth 2, 4 heads, --max-length 128
# Each model runs with SEEDS seeds (1 2 3), slimtrain and the peer alternating; the table shows
# each run's test accuracy and steady-state samples/s (slimtrain's done event, the first log
# window of 20 steps left out; the peer's first 20 steps untimed), and the RESULT lines the mean
# accuracies (target: within 1 point) and the ratio of the median samples/s (target 1.1):
#   RESULT train text model=M ranks=2 slim_acc=... peer_acc=... diff_pts=... target_pts=1
#          slim_sps=... peer_sps=... ratio=... target=1.1
# Usage: bench/train/text.sh [build-dir]     Environment: SEEDS ("1 2 3").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
seeds=${SEEDS:-1 2 3}
bench_name=train
. "$root/bench/lib.sh"
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
"$PY" -c 'import torch, h5py' 2>/dev/null ||
  { echo "bench/train text: $PY cannot import torch and h5py: no peer" >&2; exit 2; }
text=$work/fortunes.h5
"$root/scripts/text-data.sh" "$bin" "$text" >"$work/prep.log" 2>&1 ||
  { cat "$work/prep.log" >&2; exit 1; }

recipe() {
  case $1 in
    text-bow) echo "--epochs 20 --lr 0.01" ;;
    text-transformer) echo "--epochs 5 --lr 0.001 --max-length 128" ;;
  esac
}

started=$(date +%s)
for model in text-bow text-transformer; do
  for seed in $seeds; do
    run=$work/$model.$seed
    # shellcheck disable=SC2046 # the recipe is words
    mpirun -np 2 "$bin" train --data "$text" --out "$run" --resume none --model "$model" \
      --optimizer adamw --weight-decay 0 --schedule cosine --batch-size 64 --threads 1 \
      --text-dim 64 --group-by-length true --seed "$seed" --eval-every 0 --checkpoint-every 0 \
      --log-every 20 $(recipe "$model") >"$run.log" 2>&1 ||
      { echo "bench/train text: slimtrain $model seed $seed failed:" >&2; tail -n 20 "$run.log" >&2; exit 1; }
    # shellcheck disable=SC2046
    "$PY" "$root/bench/train/text_peer.py" --data "$text" --model "$model" --nproc 2 --threads 1 \
      --batch-size 64 --dim 64 --seed "$seed" --warmup-steps 20 \
      $(recipe "$model") >"$run.peer" 2>&1 ||
      { echo "bench/train text: peer $model seed $seed failed:" >&2; tail -n 20 "$run.peer" >&2; exit 1; }
  done
done
echo "all runs took $(($(date +%s) - started)) s"

"$PY" - "$work" "$cpu" $seeds <<'PYEOF'
import json, re, statistics, sys
work, cpu, seeds = sys.argv[1], sys.argv[2], sys.argv[3:]

def slim(run):
    for line in open(f"{work}/{run}/metrics.jsonl"):
        e = json.loads(line)
        if e["event"] == "done":
            return float(e["final"]["accuracy"]), float(e["samples_per_s"])

def peer(run):
    m = re.search(r"samples_per_s=([0-9.]+) test_accuracy=([0-9.]+)", open(f"{work}/{run}.peer").read())
    return float(m.group(2)), float(m.group(1))

print(f"\ntext classifiers at 2 ranks x 1 thread on {cpu}: test accuracy, steady samples/s")
print(f"  {'model':18s}{'seed':>5s}{'slim acc':>10s}{'peer acc':>10s}{'slim sps':>10s}{'peer sps':>10s}")
results = []
for model in ("text-bow", "text-transformer"):
    s = [slim(f"{model}.{k}") for k in seeds]
    p = [peer(f"{model}.{k}") for k in seeds]
    for k, a, b in zip(seeds, s, p):
        print(f"  {model:18s}{k:>5s}{a[0]:10.4f}{b[0]:10.4f}{a[1]:10.1f}{b[1]:10.1f}")
    sa, pa = statistics.mean(a[0] for a in s), statistics.mean(b[0] for b in p)
    ss, ps = statistics.median(a[1] for a in s), statistics.median(b[1] for b in p)
    print(f"  {model:18s}{'mean':>5s}{sa:10.4f}{pa:10.4f}{ss:10.1f}{ps:10.1f}  (sps: medians)")
    results.append(f"RESULT train text model={model} ranks=2 seeds={len(seeds)} slim_acc={sa:.4f} "
                   f"peer_acc={pa:.4f} diff_pts={100 * (sa - pa):+.2f} target_pts=1 "
                   f"slim_sps={ss:.1f} peer_sps={ps:.1f} ratio={ss / ps:.3f} target=1.1")
print()
print("\n".join(results))
PYEOF
