#!/usr/bin/env bash
# bench/gpu: slimtrain's GPU step against a PyTorch peer (bench/gpu/peer.py: DDP over NCCL, data
# as stored in pinned memory, non_blocking copies normalised on the GPU, default multi-tensor
# optimizers, cuDNN benchmark, TF32, the loss read at log steps only), the same models on the same
# synthetic files (bench/gpu/make_data.py), at world size 1, in one call on a lent GPU machine.
# Such a call gets one command of at most 600 s (15 minutes a session), so the script returns
# figures even when it is cut short:
#
#   bash bench/gpu/run.sh            (the device tool's run, carrying .gpu: scripts/gpu/fetch-debs.sh)
#
# 0. checks the peers' Python first, in seconds: torch, h5py and numpy or exit 1; without
#    transformers and tokenizers the hf row is skipped (skipped=no-transformers);
# 1. builds slimtrain with scripts/gpu/build-and-check.sh (Release -O2; stages setup, configure
#    and build: the gpu tier is run on its own);
# 2. the rows, most wanted first, slimtrain and the peer one after the other on the same file:
#      vit-b16-bf16  vit-tiny at ViT-B/16 size (dim 768, depth 12, heads 12, patch 16, 3x224x224),
#                 bf16, AdamW, batch 64, slimtrain (fused attention) against the peer with
#                 F.scaled_dot_product_attention             target 1.0, GPU utilisation >= 90%
#      cnn-b512   cnn-small fp32, batch 512, SGD (1x28x28, 10 classes)            target 1.0
#      torchscript-vit  the peer's ViT scripted and trained by slimtrain, against the same module
#                 in the peer                                                      target 0.95
#      hf-bert-small  --model hf:DIR fine-tuning bench/hf's BERT-small-sized checkpoint, bf16,
#                 AdamW, batch 64, against transformers (bench/hf/peer.py)        target 1.0
#      mlp-grad-sink  mlp 784-4096-4096-10 fp32, batch 512, SGD, on the cnn file, slimtrain twice:
#                 as built, against SLIMTRAIN_GRAD_SINK=on (the linear layers' row-block gradient
#                 sink forced on); ratio = as built / forced on: above 1, the default is faster
#      cnn-b64    cnn-small fp32, batch 64                                         (reported)
#      cnn-b512-channels-last  slimtrain's cnn-small in channels-last against contiguous
#      vit-b16-bf16-manual-peer  slimtrain's ViT against the peer with the attention written out
#    (a run two rows share, such as the vit peer, runs once); data is made for the first row that
#    needs it;
# 3. the table of the rows, and a line naming the rows not run.
# Each row's RESULT line is written when its two runs end, to stdout, $OUT/bench_gpu.txt and
# $OUT/results.txt (RESULT lines only; each line appended on its own, so on disk at once):
#   RESULT gpu row=NAME gpu="..." device=... slimtrain_sps=... peer_sps=... ratio=...
#          slimtrain_util=... peer_util=...[ target=...][ util_target=90][ failed=SIDES]
# samples/s are steady state (the warm-up steps left out), utilisation nvidia-smi's mean over the
# middle half of a run (nan without nvidia-smi). A side that failed, was cut or did not start
# reads nan, failed= names it (slimtrain, peer, slimtrain,peer, or data where the row's files
# could not be made) and the end of its log follows in bench_gpu.txt; every run's log tail (and
# slimtrain's metrics.jsonl) is in $OUT/runs/ as soon as the run ends. A row not run has
#   RESULT gpu row=NAME gpu="..." device=... skipped=budget        (or skipped=no-transformers)
# The budget: BUDGET seconds for the whole script, from its start. Every step's timeout (the
# Python check, the build, the data, each run) is cut to what is left less 10 s kept for the
# table; a row starts only with 30 s left (5 with SMALL=1), a run with 3, and once a row does not
# start no later row does: each says skipped=budget. The script runs itself under `timeout
# BUDGET` too, so nothing outlives the budget. Exit 0 once the rows are reported (failed ones
# included), 1 when it cannot start (no Python with torch and h5py, no binary).
# Environment:
#   BENCH_BIN       a built slimtrain: skips step 1 (the caller sets scripts/gpu/env.sh's paths)
#   ROWS            the rows to run, by name, space-separated (all of them when unset)
#   DEVICE          cuda (default); cpu rehearses on a machine without a GPU (the peer on gloo)
#   SMALL=1         tiny sizes, to rehearse (hf batch 8, mlp 784-512-512-10)
#   STEPS, WARMUP   timed steps and the untimed ones before them: 200 and 30; 20 and 5 with SMALL
#   BUDGET          540 s: the 600 s command less room for the files to come back
#   BUILD_BUDGET_S  300 s: the build's cap within the budget
#   OUT             where everything lands (.gpu/out; the device tool sets its own)
#   BENCH_PY        the peers' Python (else .torch-venv's, /opt/torch/.venv's or python3: the
#                   first with torch, h5py and numpy); MPIEXEC: mpirun
# tests/e2e/bench_gpu_rehearsal.sh (CTest's e2e_bench_gpu_rehearsal) rehearses it on the CPU.
set -o pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUDGET=${BUDGET:-540}
[[ $BUDGET =~ ^[1-9][0-9]*$ ]] || { echo "bench/gpu: BUDGET '$BUDGET' is not a positive integer" >&2; exit 2; }
if [ -z "${BENCH_GPU_UNDER_TIMEOUT:-}" ]; then
  # The script again, under timeout: a hang the steps' own limits miss still ends at the budget.
  BENCH_GPU_UNDER_TIMEOUT=1 timeout -k 5 "$BUDGET" bash "${BASH_SOURCE[0]}" "$@"
  rc=$?
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "bench/gpu: stopped by timeout at the $BUDGET s budget (what was written stays)" |
      tee -a "${OUT:-$REPO/.gpu/out}/bench_gpu.txt"
  fi
  exit "$rc"
fi
cd "$REPO" || exit 1
T0=$SECONDS
OUT=${OUT:-$REPO/.gpu/out}
mkdir -p "$OUT/runs" || exit 1
rm -f "$OUT"/runs/*
REPORT=$OUT/bench_gpu.txt
RESULTS=$OUT/results.txt
: >"$REPORT"; : >"$RESULTS"
DEVICE=${DEVICE:-cuda}
RESERVE_S=10
RUN_CAP_S=300
SKIPPED=()
W=$(mktemp -d /tmp/bench-gpu.XXXXXX)
trap 'rm -rf "$W"' EXIT
trap 'exit 143' TERM  # so that the EXIT trap cleans up
# shellcheck source=SCRIPTDIR/lib.sh
. "$REPO/bench/gpu/lib.sh"
if [ "${SMALL:-0}" = 1 ]; then
  cnn_n=4096 vit_n=256 vit_hw=32 vit=(--vit-dim 64 --vit-depth 2 --vit-heads 4 --vit-patch 8) text_n=512
  mlp_widths=512,512 hf_batch=8 steps=${STEPS:-20} warmup=${WARMUP:-5} ROW_MIN_S=5
else
  cnn_n=65536 vit_n=1024 vit_hw=224 vit=(--vit-dim 768 --vit-depth 12 --vit-heads 12 --vit-patch 16)
  text_n=16384 mlp_widths=4096,4096 hf_batch=64 steps=${STEPS:-200} warmup=${WARMUP:-30} ROW_MIN_S=30
fi
THREADS=4
[ "$DEVICE" = cpu ] && THREADS=$(( $(nproc) < 4 ? $(nproc) : 4 ))  # no more threads than cores
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
if [ -n "${SLIMTRAIN_GRAD_SINK:-}" ]; then  # the mlp row's first run is the build's default
  say "bench/gpu: SLIMTRAIN_GRAD_SINK=$SLIMTRAIN_GRAD_SINK from the environment unset"
  unset SLIMTRAIN_GRAD_SINK
fi

# ------------------------------------------------------------------ the peers' Python, first
# One interpreter start per candidate: the modules every row needs, then those of the hf row.
check='import sys
try:
    import torch, h5py, numpy
except Exception as e:
    print("missing", e); sys.exit(1)
try:
    import transformers, tokenizers
    hf = transformers.__version__
except Exception as e:
    hf = "none (%s)" % e
print("PyTorch", torch.__version__, "h5py", h5py.__version__, "numpy", numpy.__version__, "|", hf)'
PY=; pyinfo=; tried=
for c in ${BENCH_PY:+"$BENCH_PY"} "$REPO/.torch-venv/bin/python" /opt/torch/.venv/bin/python3 python3; do
  command -v "$c" >/dev/null || continue
  if pyinfo=$(limited 120 "$c" -c "$check" 2>&1); then PY=$c; break; fi
  tried+=" $c: ${pyinfo##*$'\n'};"
  [ -n "${BENCH_PY:-}" ] && break  # the Python asked for, or none
done
[ -n "$PY" ] || { say "bench/gpu: no Python with torch, h5py and numpy:$tried"; exit 1; }
hf_ok=1
[[ $pyinfo == *"| none"* ]] && hf_ok=0
say "bench/gpu: $PY: ${pyinfo//|/; transformers:}"
[ "$hf_ok" = 1 ] || say "bench/gpu: no transformers and tokenizers there: the hf-bert-small row is skipped"

# ------------------------------------------------------------------ build (no gpu tier)
BIN=${BENCH_BIN:-}
if [ -z "$BIN" ]; then
  tb=$(cap "${BUILD_BUDGET_S:-300}")
  say "bench/gpu: building (limit $tb s; $OUT/build_stage.txt, $OUT/summary.txt)"
  RUN_BUDGET_S=$tb RUN_STAGES=setup,configure,build CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    timeout -k 5 "$tb" bash "$REPO/scripts/gpu/build-and-check.sh" >"$OUT/build_stage.txt" 2>&1
  say "bench/gpu: build exit $? after $((SECONDS - T0)) s"
  BIN=$REPO/${BUILD_DIR:-build-gpu}/apps/slimtrain
  P=${GPUROOT:-/tmp/gpuroot}
  # shellcheck source=SCRIPTDIR/../../scripts/gpu/env.sh
  . "$REPO/scripts/gpu/env.sh"
fi
[ -x "$BIN" ] || { say "bench/gpu: no slimtrain at $BIN (see $OUT/build_stage.txt)"; tail -n 20 "$OUT/build_stage.txt" 2>/dev/null; exit 1; }
GPU=
command -v nvidia-smi >/dev/null && GPU=$(timeout 20 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
GPU=${GPU:-$DEVICE (no nvidia-smi)}
say "bench/gpu on $GPU; slimtrain $("$BIN" --version 2>&1 | head -n 1), LibTorch $("$BIN" --version 2>&1 | sed -n 's/^  LibTorch  \([0-9.]*\).*/\1/p'); budget $BUDGET s, $(left) s left for the rows"

# ------------------------------------------------------------------ data, made for the row that first needs it
# made FILE COMMAND...: FILE, made by COMMAND (logged in $W/data.log) unless it is there; where
# it fails, DATA_WHY says how (row_failed's words).
made() {
  local f=$1 s rc; shift
  [ -s "$f" ] && return 0
  s=$(cap 180)
  timeout -k 5 "$s" "$@" >>"$W/data.log" 2>&1
  rc=$?
  [ "$rc" = 0 ] && return 0
  DATA_WHY="exit $rc"
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then DATA_WHY="cut at its $s s limit"; fi
  rm -rf "$f"
  return 1
}
cnn_data() { made "$W/cnn.h5" "$PY" "$REPO/bench/gpu/make_data.py" "$W/cnn.h5" "$cnn_n" 1 28 28 10; }
vit_data() { made "$W/vit.h5" "$PY" "$REPO/bench/gpu/make_data.py" "$W/vit.h5" "$vit_n" 3 "$vit_hw" "$vit_hw" 10; }
# The HuggingFace row: bench/hf's BERT-small-sized checkpoint (its own WordPiece tokenizer.json)
# on synthetic sentences cut at its 128 tokens.
hf_data() {
  made "$W/text.csv" "$PY" "$REPO/bench/gpu/make_text.py" "$W/text.csv" "$text_n" 8 &&
    made "$W/bert-small/tokenizer.json" "$PY" "$REPO/bench/hf/make_model.py" "$W/text.csv" 8 "$W/bert-small" &&
    made "$W/text.h5" "$BIN" prep text --train "$W/text.csv" --text-column text \
      --label-column category --tokenizer "$W/bert-small/tokenizer.json" -o "$W/text.h5"
}

# ------------------------------------------------------------------ the rows
cnn=(--model cnn-small --optimizer sgd --momentum 0.9 --lr 0.05)
vitslim=(--model vit-tiny "${vit[@]}" --precision bf16 --optimizer adamw --lr 0.001)
vitpeer=(--model vit "${vit[@]}" --precision bf16 --optimizer adamw --lr 0.001)
mlp=(--model mlp --mlp-widths "$mlp_widths" --optimizer sgd --momentum 0.9 --lr 0.01 --batch-size 512)
row_vit() {
  vit_data || { row_failed vit-b16-bf16 "ViT-B/16 bf16" "$W/data.log"; return; }
  slim vit "$W/vit.h5" "${vitslim[@]}" --batch-size 64
  peer vit-peer "$W/vit.h5" "${vitpeer[@]}" --attention sdpa --batch-size 64
  row vit-b16-bf16 vit vit-peer 1.0 "ViT-B/16 bf16 batch 64, peer with SDPA" " util_target=90"
}
row_cnn512() {
  cnn_data || { row_failed cnn-b512 "cnn-small fp32 batch 512" "$W/data.log"; return; }
  slim cnn512 "$W/cnn.h5" "${cnn[@]}" --batch-size 512
  peer cnn512-peer "$W/cnn.h5" --model cnn-small --batch-size 512
  row cnn-b512 cnn512 cnn512-peer 1.0 "cnn-small fp32 batch 512"
}
row_torchscript() {
  local what="the peer's ViT scripted, in slimtrain"
  { vit_data && made "$W/vit.pt" "$PY" "$REPO/bench/gpu/peer.py" --data "$W/vit.h5" --model vit \
      "${vit[@]}" --attention sdpa --device "$DEVICE" --script "$W/vit.pt"; } ||
    { row_failed torchscript-vit "$what" "$W/data.log"; return; }
  slim ts "$W/vit.h5" --model "torchscript:$W/vit.pt" --precision bf16 --optimizer adamw --lr 0.001 --batch-size 64
  peer vit-peer "$W/vit.h5" "${vitpeer[@]}" --attention sdpa --batch-size 64
  row torchscript-vit ts vit-peer 0.95 "$what"
}
row_hf() {
  local what="hf:DIR BERT-small fine-tuning bf16 batch $hf_batch, peer transformers"
  hf_data || { row_failed hf-bert-small "$what" "$W/data.log"; return; }
  # Fine-tuning: AdamW at a constant 5e-5, bf16, batch 64 (8 with SMALL), lengths grouped.
  slim hf "$W/text.h5" --model "hf:$W/bert-small" --precision bf16 --optimizer adamw --lr 5e-5 \
    --weight-decay 0 --schedule constant --batch-size "$hf_batch" --group-by-length true
  pyrun hf-peer "$REPO/bench/hf/peer.py" --data "$W/text.h5" --model "$W/bert-small" --nproc 1 \
    --threads "$THREADS" --batch-size "$hf_batch" --steps $((steps + warmup)) --warmup-steps "$warmup" \
    --device "$DEVICE" --precision bf16
  row hf-bert-small hf hf-peer 1.0 "$what"
}
row_mlp() {
  local what="mlp 784-${mlp_widths/,/-}-10 fp32 batch 512: as built / SLIMTRAIN_GRAD_SINK=on"
  cnn_data || { row_failed mlp-grad-sink "$what" "$W/data.log"; return; }
  slim mlp "$W/cnn.h5" "${mlp[@]}"
  SLIMTRAIN_GRAD_SINK=on slim mlp-sink "$W/cnn.h5" "${mlp[@]}"
  # What each run's start event says it used: a ratio of 1 between two equal runs says nothing.
  say "  mlp-grad-sink: the gradient sink as built: $(sink_used mlp); forced on: $(sink_used mlp-sink)"
  row mlp-grad-sink mlp mlp-sink "" "$what"
}
sink_used() {
  "$PY" -c 'import json, sys
e = [x for x in map(json.loads, open(sys.argv[1] + "/metrics.jsonl")) if x.get("event") == "start"]
print(str(e[0].get("grad_sink", "not said")).lower() if e else "no start event")' "$W/$1" 2>/dev/null || echo "no metrics"
}
row_cnn64() {
  cnn_data || { row_failed cnn-b64 "cnn-small fp32 batch 64" "$W/data.log"; return; }
  slim cnn64 "$W/cnn.h5" "${cnn[@]}" --batch-size 64
  peer cnn64-peer "$W/cnn.h5" --model cnn-small --batch-size 64
  row cnn-b64 cnn64 cnn64-peer "" "cnn-small fp32 batch 64"
}
row_cnn512cl() {
  cnn_data || { row_failed cnn-b512-channels-last "slimtrain channels-last / contiguous" "$W/data.log"; return; }
  slim cnn512-cl "$W/cnn.h5" "${cnn[@]}" --batch-size 512 --memory-format channels-last
  slim cnn512 "$W/cnn.h5" "${cnn[@]}" --batch-size 512
  row cnn-b512-channels-last cnn512-cl cnn512 "" "slimtrain channels-last / contiguous"
}
row_vitmanual() {
  vit_data || { row_failed vit-b16-bf16-manual-peer "the same, peer attention written out" "$W/data.log"; return; }
  slim vit "$W/vit.h5" "${vitslim[@]}" --batch-size 64
  peer vit-peer-manual "$W/vit.h5" "${vitpeer[@]}" --attention manual --batch-size 64
  row vit-b16-bf16-manual-peer vit vit-peer-manual "" "the same, peer attention written out"
}
for r in vit:vit-b16-bf16 cnn512:cnn-b512 torchscript:torchscript-vit hf:hf-bert-small \
  mlp:mlp-grad-sink cnn64:cnn-b64 cnn512cl:cnn-b512-channels-last vitmanual:vit-b16-bf16-manual-peer; do
  if [ -n "${ROWS:-}" ] && [[ " $ROWS " != *" ${r#*:} "* ]]; then continue; fi
  if [ "${r%%:*}" = hf ] && [ "$hf_ok" = 0 ]; then skip "${r#*:}" no-transformers; continue; fi
  start_row "${r#*:}" && "row_${r%%:*}"
done

# ------------------------------------------------------------------ the table, the rows not run
table | tee -a "$REPORT"
[ "${#SKIPPED[@]}" = 0 ] || say "bench/gpu: rows not run: ${SKIPPED[*]}"
say "bench/gpu: done in $((SECONDS - T0)) s of the $BUDGET s budget"
