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
# The peer runs on Debian's PyTorch 1.13 and, where scripts/install-deps.sh --torch pip installed
# it, on PyTorch 2.x too: a RESULT line per model and PyTorch version (torch=...).
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
    for py in "$PY" $PY2; do
      out=$run.peer; [ "$py" = "$PY" ] || out=$run.peer2
      # shellcheck disable=SC2046
      "$py" "$root/bench/train/text_peer.py" --data "$text" --model "$model" --nproc 2 \
        --threads 1 --batch-size 64 --dim 64 --seed "$seed" --warmup-steps 20 \
        $(recipe "$model") >"$out" 2>&1 ||
        { echo "bench/train text: peer ($py) $model seed $seed failed:" >&2; tail -n 20 "$out" >&2; exit 1; }
    done
  done
done
echo "all runs took $(($(date +%s) - started)) s"

"$PY" - "$work" "$cpu" "$(torch_version "$PY")" "$([ -n "$PY2" ] && torch_version "$PY2")" \
  $seeds <<'PYEOF'
import json, re, statistics, sys
work, cpu, torch1, torch2, seeds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]

def slim(run):
    for line in open(f"{work}/{run}/metrics.jsonl"):
        e = json.loads(line)
        if e["event"] == "done":
            return float(e["final"]["accuracy"]), float(e["samples_per_s"])

def peer(run, suffix):
    m = re.search(r"samples_per_s=([0-9.]+) test_accuracy=([0-9.]+)", open(f"{work}/{run}.{suffix}").read())
    return float(m.group(2)), float(m.group(1))

peers = [("peer", torch1)] + ([("peer2", torch2)] if torch2 else [])
print(f"\ntext classifiers at 2 ranks x 1 thread on {cpu}: test accuracy, steady samples/s; the "
      f"peer on PyTorch {' and '.join(v for _, v in peers)}")
head = "".join(f"{'peer ' + v[:4] + ' acc':>15s}{'sps':>9s}" for _, v in peers)
print(f"  {'model':18s}{'seed':>5s}{'slim acc':>10s}{'slim sps':>10s}{head}")
results = []
for model in ("text-bow", "text-transformer"):
    s = [slim(f"{model}.{k}") for k in seeds]
    p = {suffix: [peer(f"{model}.{k}", suffix) for k in seeds] for suffix, _ in peers}
    for i, k in enumerate(seeds):
        row = "".join(f"{p[x][i][0]:15.4f}{p[x][i][1]:9.1f}" for x, _ in peers)
        print(f"  {model:18s}{k:>5s}{s[i][0]:10.4f}{s[i][1]:10.1f}{row}")
    sa, ss = statistics.mean(a[0] for a in s), statistics.median(a[1] for a in s)
    for suffix, version in peers:
        pa = statistics.mean(b[0] for b in p[suffix])
        ps = statistics.median(b[1] for b in p[suffix])
        print(f"  {model:18s}{'mean':>5s}{sa:10.4f}{ss:10.1f}  peer on {version}: {pa:.4f} {ps:.1f}  (sps: medians)")
        results.append(f"RESULT train text model={model} ranks=2 torch={version} seeds={len(seeds)} "
                       f"slim_acc={sa:.4f} peer_acc={pa:.4f} diff_pts={100 * (sa - pa):+.2f} "
                       f"target_pts=1 slim_sps={ss:.1f} peer_sps={ps:.1f} ratio={ss / ps:.3f} "
                       f"target=1.1")
print()
print("\n".join(results))
PYEOF
