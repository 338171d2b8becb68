#!/usr/bin/env bash
# bench/gpu: slimtrain's GPU step against a PyTorch peer (bench/gpu/peer.py: DDP over NCCL, data
# as stored in pinned memory, non_blocking copies normalised on the GPU, default multi-tensor
# optimizers, cuDNN benchmark, TF32, the loss read at log steps only), the same models on the same
# synthetic files (bench/gpu/make_data.py), at world size 1, in one call on a lent GPU machine:
#
#   bash bench/gpu/run.sh            (the device tool's run, carrying .gpu: scripts/gpu/fetch-debs.sh)
#
# 1. builds slimtrain with scripts/gpu/build-and-check.sh (Release -O2) and runs the gpu tier;
# 2. the rows, slimtrain and the peer one after the other on the same file:
#      cnn-b512   cnn-small fp32, batch 512, SGD (1x28x28, 10 classes)            target 1.0
#      cnn-b64    cnn-small fp32, batch 64                                         (reported)
#      cnn-b512-cl  slimtrain's cnn-small in channels-last against contiguous     (reported)
#      vit        vit-tiny at ViT-B/16 size (dim 768, depth 12, heads 12, patch 16, 3x224x224), bf16,
#                 AdamW, batch 64: slimtrain (fused attention) against the peer with
#                 F.scaled_dot_product_attention (target 1.0, GPU utilisation >= 90%), and the
#                 peer with the same attention written out (reported)
#      torchscript  the peer's ViT (fused attention) scripted and trained by slimtrain, against
#                 the same module in the peer                                    target 0.95
#      hf         --model hf:DIR fine-tuning bench/hf's BERT-small-sized checkpoint, bf16, AdamW,
#                 batch 64, against transformers (bench/hf/peer.py --device cuda) target 1.0
# 3. a table, and RESULT lines naming the GPU, each side's samples/s (steady state: the warm-up
#    steps left out) and nvidia-smi's utilisation over the middle of each run; all in
#    $OUT/bench_gpu.txt.
# Environment: BENCH_BIN (a built slimtrain: skips step 1), DEVICE (cuda; cpu to rehearse on a
# machine without a GPU), SMALL=1 (tiny sizes, to rehearse), STEPS, WARMUP, BUILD_BUDGET_S (300).
set -o pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
OUT=${OUT:-$REPO/.gpu/out}
mkdir -p "$OUT"
T0=$SECONDS
DEVICE=${DEVICE:-cuda}
REPORT=$OUT/bench_gpu.txt
: >"$REPORT"
say() { echo "$*" | tee -a "$REPORT"; }

# ------------------------------------------------------------------ build (and the gpu tier)
BIN=${BENCH_BIN:-}
if [ -z "$BIN" ]; then
  RUN_BUDGET_S=${BUILD_BUDGET_S:-300} RUN_STAGES=setup,configure,build,ctest \
    CXX_FLAGS_RELEASE="-O2 -DNDEBUG" bash "$REPO/scripts/gpu/build-and-check.sh" >"$OUT/build_stage.txt" 2>&1
  BIN=$REPO/${BUILD_DIR:-build-gpu}/apps/slimtrain
  P=${GPUROOT:-/tmp/gpuroot}
  . "$REPO/scripts/gpu/env.sh"
fi
[ -x "$BIN" ] || { say "bench/gpu: no slimtrain at $BIN (see $OUT/build_stage.txt)"; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
PY=${BENCH_PY:-}
for c in "$REPO/.torch-venv/bin/python" /opt/torch/.venv/bin/python3 python3; do
  [ -z "$PY" ] && "$c" -c "import torch, h5py" 2>/dev/null && PY=$c
done
[ -n "$PY" ] || { say "bench/gpu: no Python with torch and h5py"; exit 1; }
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
GPU=${GPU:-$DEVICE (no nvidia-smi)}
say "bench/gpu on $GPU; slimtrain $("$BIN" --version | head -1); $("$PY" -c 'import torch; print("PyTorch", torch.__version__)'); built by $((SECONDS - T0)) s"

# ------------------------------------------------------------------ data and sizes
W=$(mktemp -d /tmp/bench-gpu.XXXXXX)
trap 'rm -rf "$W"' EXIT
if [ "${SMALL:-0}" = 1 ]; then
  cnn_n=4096 vit_n=256 vit_hw=32 vit=(--vit-dim 64 --vit-depth 2 --vit-heads 4 --vit-patch 8) text_n=512
  steps=${STEPS:-20} warmup=${WARMUP:-5}
else
  cnn_n=65536 vit_n=1024 vit_hw=224 vit=(--vit-dim 768 --vit-depth 12 --vit-heads 12 --vit-patch 16)
  text_n=16384
  steps=${STEPS:-200} warmup=${WARMUP:-30}
fi
"$PY" "$REPO/bench/gpu/make_data.py" "$W/cnn.h5" "$cnn_n" 1 28 28 10 || exit 1
"$PY" "$REPO/bench/gpu/make_data.py" "$W/vit.h5" "$vit_n" 3 "$vit_hw" "$vit_hw" 10 || exit 1
"$PY" "$REPO/bench/gpu/peer.py" --data "$W/vit.h5" --model vit "${vit[@]}" --attention sdpa \
  --device "$DEVICE" --script "$W/vit.pt" || exit 1

# The HuggingFace row: bench/hf's BERT-small-sized checkpoint (its own WordPiece tokenizer.json)
# on synthetic sentences cut at its 128 tokens; skipped where the Python has no transformers.
hf_ok=0
if "$PY" -c "import transformers, tokenizers" 2>/dev/null; then
  "$PY" "$REPO/bench/gpu/make_text.py" "$W/text.csv" "$text_n" 8 &&
    "$PY" "$REPO/bench/hf/make_model.py" "$W/text.csv" 8 "$W/bert-small" >"$W/hf-model.log" 2>&1 &&
    "$BIN" prep text --train "$W/text.csv" --text-column text --label-column category \
      --tokenizer "$W/bert-small/tokenizer.json" -o "$W/text.h5" >"$W/hf-prep.log" 2>&1 && hf_ok=1
  [ "$hf_ok" = 1 ] || { say "bench/gpu: the HuggingFace row's data failed:"; tail -n 5 "$W"/hf-*.log | tee -a "$REPORT"; }
else
  say "bench/gpu: $PY has no transformers: the HuggingFace row is skipped"
fi

# util FILE: the mean of nvidia-smi's utilisation samples over the middle half of a run.
sample() { nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 250 >"$1" 2>/dev/null & echo $!; }
util() {
  [ -s "$1" ] || { echo nan; return; }
  "$PY" -c 'import sys
v = [float(l) for l in open(sys.argv[1]) if l.strip().replace(".", "").isdigit()]
m = v[len(v) // 4: max(len(v) // 4 + 1, 3 * len(v) // 4)]
print(f"{sum(m) / len(m):.0f}" if m else "nan")' "$1"
}
# slim NAME DATA OPTIONS...: one slimtrain run; its steady samples/s in $W/NAME.sps, utilisation.
slim() {
  local name=$1 data=$2; shift 2
  local s; s=$(sample "$W/$name.util")
  timeout 300 mpirun -np 1 "$BIN" train --device "$DEVICE" --data "$data" --out "$W/$name" \
    --resume none --eval-every 0 --checkpoint-every 0 --final-split none --threads 4 \
    --max-steps $((steps + warmup)) --log-every "$warmup" "$@" >"$W/$name.log" 2>&1
  local rc=$?
  kill "$s" 2>/dev/null
  "$PY" -c 'import json, sys
e = [json.loads(l) for l in open(sys.argv[1] + "/metrics.jsonl") if "\"done\"" in l]
print(e[-1]["samples_per_s"] if e else "nan")' "$W/$name" >"$W/$name.sps" 2>/dev/null || echo nan >"$W/$name.sps"
  [ "$rc" = 0 ] || { say "  slimtrain $name failed (exit $rc):"; tail -n 5 "$W/$name.log" | tee -a "$REPORT"; }
}
# peer NAME DATA OPTIONS...: the peer's run, alike.
peer() {
  local name=$1 data=$2; shift 2
  local s; s=$(sample "$W/$name.util")
  timeout 300 "$PY" "$REPO/bench/gpu/peer.py" --data "$data" --device "$DEVICE" --steps "$steps" \
    --warmup-steps "$warmup" "$@" >"$W/$name.log" 2>&1
  local rc=$?
  kill "$s" 2>/dev/null
  sed -n 's/.*samples_per_s=\([0-9.]*\).*/\1/p' "$W/$name.log" | tail -1 >"$W/$name.sps"
  [ -s "$W/$name.sps" ] || echo nan >"$W/$name.sps"
  [ "$rc" = 0 ] || { say "  peer $name failed (exit $rc):"; tail -n 5 "$W/$name.log" | tee -a "$REPORT"; }
}

cnn=(--model cnn-small --optimizer sgd --momentum 0.9 --lr 0.05)
vitslim=(--model vit-tiny "${vit[@]}" --precision bf16 --optimizer adamw --lr 0.001)
vitpeer=(--model vit "${vit[@]}" --precision bf16 --optimizer adamw --lr 0.001)
slim cnn512 "$W/cnn.h5" "${cnn[@]}" --batch-size 512
peer cnn512-peer "$W/cnn.h5" --model cnn-small --batch-size 512
slim cnn64 "$W/cnn.h5" "${cnn[@]}" --batch-size 64
peer cnn64-peer "$W/cnn.h5" --model cnn-small --batch-size 64
slim cnn512-cl "$W/cnn.h5" "${cnn[@]}" --batch-size 512 --memory-format channels-last
slim vit "$W/vit.h5" "${vitslim[@]}" --batch-size 64
peer vit-peer "$W/vit.h5" "${vitpeer[@]}" --attention sdpa --batch-size 64
peer vit-peer-manual "$W/vit.h5" "${vitpeer[@]}" --attention manual --batch-size 64
slim ts "$W/vit.h5" --model "torchscript:$W/vit.pt" --precision bf16 --optimizer adamw --lr 0.001 --batch-size 64
if [ "$hf_ok" = 1 ]; then  # fine-tuning: AdamW at a constant 5e-5, bf16, batch 64, lengths grouped
  slim hf "$W/text.h5" --model "hf:$W/bert-small" --precision bf16 --optimizer adamw --lr 5e-5 \
    --weight-decay 0 --schedule constant --batch-size 64 --group-by-length true
  s=$(sample "$W/hf-peer.util")
  timeout 300 "$PY" "$REPO/bench/hf/peer.py" --data "$W/text.h5" --model "$W/bert-small" --nproc 1 \
    --threads 4 --batch-size 64 --steps $((steps + warmup)) --warmup-steps "$warmup" \
    --device "$DEVICE" --precision bf16 >"$W/hf-peer.log" 2>&1 ||
    { say "  peer hf-peer failed:"; tail -n 5 "$W/hf-peer.log" | tee -a "$REPORT"; }
  kill "$s" 2>/dev/null
  sed -n 's/.*samples_per_s=\([0-9.]*\).*/\1/p' "$W/hf-peer.log" | tail -1 >"$W/hf-peer.sps"
fi

# ------------------------------------------------------------------ table and RESULT lines
"$PY" - "$W" "$GPU" "$steps" "$warmup" "$DEVICE" <<'EOF' | tee -a "$REPORT"
import math, sys
w, gpu, steps, warmup, device = sys.argv[1:]
def num(name, ext):
    try:
        return float(open(f"{w}/{name}.{ext}").read().strip())
    except (OSError, ValueError):
        return math.nan
def util(name):
    try:
        v = [float(l) for l in open(f"{w}/{name}.util") if l.strip()]
    except (OSError, ValueError):
        return math.nan
    m = v[len(v) // 4: max(len(v) // 4 + 1, 3 * len(v) // 4)]
    return sum(m) / len(m) if m else math.nan
rows = [  # row, slimtrain run, peer run, target, what
    ("cnn-b512", "cnn512", "cnn512-peer", 1.0, "cnn-small fp32 batch 512"),
    ("cnn-b64", "cnn64", "cnn64-peer", None, "cnn-small fp32 batch 64"),
    ("cnn-b512-channels-last", "cnn512-cl", "cnn512", None, "slimtrain channels-last / contiguous"),
    ("vit-b16-bf16", "vit", "vit-peer", 1.0, "ViT-B/16 bf16 batch 64, peer with SDPA"),
    ("vit-b16-bf16-manual-peer", "vit", "vit-peer-manual", None, "the same, peer attention written out"),
    ("torchscript-vit", "ts", "vit-peer", 0.95, "the peer's ViT scripted, in slimtrain"),
    ("hf-bert-small", "hf", "hf-peer", 1.0, "hf:DIR BERT-small fine-tuning bf16 batch 64, peer transformers"),
]
print(f"\nbench/gpu on {gpu} ({device}), {steps} timed steps after {warmup} warm-up steps, world size 1")
print(f"  {'row':26s}{'slimtrain sps':>15s}{'peer sps':>12s}{'ratio':>8s}{'util %':>14s}  what")
for row, a, b, target, what in rows:
    sa, sb = num(a, "sps"), num(b, "sps")
    r = sa / sb if sb > 0 else math.nan
    print(f"  {row:26s}{sa:15.1f}{sb:12.1f}{r:8.3f}{util(a):7.0f}/{util(b):<6.0f}  {what}")
for row, a, b, target, what in rows:
    sa, sb = num(a, "sps"), num(b, "sps")
    r = sa / sb if sb > 0 else math.nan
    extra = f" target={target}" if target else ""
    if row == "vit-b16-bf16":
        extra += " util_target=90"
    print(f'RESULT gpu row={row} gpu="{gpu}" device={device} slimtrain_sps={sa:.1f} peer_sps={sb:.1f} '
          f"ratio={r:.3f} slimtrain_util={util(a):.0f} peer_util={util(b):.0f}{extra}")
EOF
say "bench/gpu: done in $((SECONDS - T0)) s"
