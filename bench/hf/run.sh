#!/usr/bin/env bash
# Fine-tuning a HuggingFace checkpoint: `slimtrain train --model hf:DIR` against PyTorch +
# transformers (bench/hf/peer.py: from_pretrained, DDP over gloo) on one checkpoint of
# BERT-small's size (4 layers, hidden 512; bench/hf/make_model.py, random weights, nothing
# downloaded), one file (the text demo's fortunes, tokenized by `prep text` with the
# checkpoint's tokenizer.json, cut at 128), one recipe: 2 ranks x 1 thread x batch 16, AdamW at
# a constant 5e-5, no weight decay, dropout on, lengths grouped; STEPS steps (40), the first 10
# untimed on both sides. ROUNDS rounds (3), slimtrain and the peer alternating; medians.
#   RESULT hf model=bert-small ranks=2 torch=V slim_sps=... peer_sps=... ratio=... target=1.0
#          [slimtrain_libtorch2_sps=... libtorch2_ratio=...]
# The peer needs transformers: PyTorch 2.x from scripts/install-deps.sh --torch pip (.torch-venv).
# slimtrain runs as built by scripts/build.sh (Debian's LibTorch 1.13) and, where it is built,
# against the venv's LibTorch too (build-torch2: fused attention).
# Usage: bench/hf/run.sh [build-dir]     Environment: STEPS (40), ROUNDS (3).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
steps=${STEPS:-40}
rounds=${ROUNDS:-3}
bench_name=hf
. "$root/bench/lib.sh"
positive_ints "$steps" "$rounds"
[ "$steps" -gt 10 ] || { echo "bench/hf: STEPS must be above the 10 untimed steps" >&2; exit 2; }
[ -n "$PY2" ] && "$PY2" -c 'import transformers, tokenizers' 2>/dev/null ||
  { echo "bench/hf: no Python with PyTorch 2.x and transformers (scripts/install-deps.sh --torch pip makes .torch-venv): no peer" >&2; exit 2; }
cpu=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error

"$root/scripts/text-data.sh" "$bin" "$work/fortunes.h5" >"$work/prep.log" 2>&1 ||
  { cat "$work/prep.log" >&2; exit 1; }
classes=$("$PY" -c 'import csv, sys; print(len({r[-1] for r in list(csv.reader(open(sys.argv[1], newline="")))[1:]}))' \
  "$work/fortunes-train.csv")
"$PY2" "$root/bench/hf/make_model.py" "$work/fortunes-train.csv" "$classes" "$work/bert-small" \
  >"$work/model.log" 2>&1 || { cat "$work/model.log" >&2; exit 1; }
"$bin" prep text --train "$work/fortunes-train.csv" --test "$work/fortunes-test.csv" \
  --text-column text --label-column category --tokenizer "$work/bert-small/tokenizer.json" \
  -o "$work/hf.h5" >"$work/prep-hf.log" 2>&1 || { cat "$work/prep-hf.log" >&2; exit 1; }

slim() {  # slim BINARY OUT: one slimtrain run; prints its steady samples/s
  mpirun -np 2 "$1" train --data "$work/hf.h5" --model "hf:$work/bert-small" --out "$2" \
    --resume none --optimizer adamw --lr 5e-5 --weight-decay 0 --schedule constant \
    --batch-size 16 --threads 1 --group-by-length true --max-steps "$steps" --log-every 10 \
    --eval-every 0 --checkpoint-every 0 --final-split none >"$2.log" 2>&1 ||
    { echo "bench/hf: slimtrain failed:" >&2; tail -n 20 "$2.log" >&2; exit 1; }
  "$PY" -c "import json,sys; print([json.loads(l) for l in open(sys.argv[1])][-1]['samples_per_s'])" \
    "$2/metrics.jsonl"
}
peer() {
  "$PY2" "$root/bench/hf/peer.py" --data "$work/hf.h5" --model "$work/bert-small" --nproc 2 \
    --threads 1 --batch-size 16 --steps "$steps" --warmup-steps 10 >"$work/peer.log" 2>&1 ||
    { echo "bench/hf: peer failed:" >&2; tail -n 20 "$work/peer.log" >&2; exit 1; }
  grep -o 'samples_per_s=[0-9.]*' "$work/peer.log" | cut -d= -f2
}

echo "fine-tuning BERT-small ($classes classes of fortunes, cut at 128 tokens) at 2 ranks x 1 thread on $cpu"
printf '  %-6s %14s %14s %18s\n' round slimtrain peer "slimtrain (2.x)"
s1=() p1=() s2=()
for r in $(seq "$rounds"); do
  a=$(slim "$bin" "$work/slim.$r")
  b=$(peer)
  c=-; [ -z "$bin2" ] || c=$(printf '%.1f' "$(slim "$bin2" "$work/slim2.$r")")
  s1+=("$a") p1+=("$b") s2+=("$c")
  printf '  %-6s %14.1f %14.1f %18s\n' "$r" "$a" "$b" "$c"
done
"$PY" - "$(torch_version "$PY2")" "${s1[*]}" "${p1[*]}" "${s2[*]}" <<'PYEOF'
import statistics, sys
version, s, p, s2 = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4].split()
med = lambda xs: statistics.median(float(x) for x in xs)
line = (f"RESULT hf model=bert-small ranks=2 torch={version} slim_sps={med(s):.1f} "
        f"peer_sps={med(p):.1f} ratio={med(s) / med(p):.3f} target=1.0")
if s2 and s2[0] != "-":
    line += f" slimtrain_libtorch2_sps={med(s2):.1f} libtorch2_ratio={med(s2) / med(p):.3f}"
print(f"\nmedians of {len(s)} rounds: slimtrain (LibTorch 1.13) {med(s):.1f}, peer {med(p):.1f} samples/s")
print(line)
PYEOF
