#!/usr/bin/env bash
# bench/gpu/run.sh rehearsed on the CPU (SMALL=1 DEVICE=cpu, 4 timed steps after 2), so that the
# one call a lent GPU machine gets cannot rot:
# - every row's RESULT line lands in $OUT/results.txt (RESULT lines only) with both sides'
#   samples/s and a ratio, utilisation nan without nvidia-smi and no error about it; on a
#   LibTorch older than 2 the torchscript row may fail (a module scripted by PyTorch 2.x that
#   calls scaled_dot_product_attention) and must then say so, with its log's tail, while the
#   rows after it go on; every run's log is in $OUT/runs/;
# - run again with a budget that ends after the first row or two (twice the first run's time to
#   its first row, and 20 s), the finished rows' lines are still there, the rest say
#   skipped=budget and are named on a last line, and it ends within its budget.
# The peers need torch, h5py, numpy, transformers and tokenizers: the venv's Python
# (SLIMTRAIN_TORCH_PYTHON, .torch-venv from scripts/torch-venv.sh). 60-75 s on 2 cores.
# shellcheck disable=SC2016  # check's eval gets its expressions unexpanded, on purpose
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "$0")/lib.sh"
PY2=${SLIMTRAIN_TORCH_PYTHON:-}
if [ -z "$PY2" ] || ! "$PY2" -c "import torch, h5py, numpy, transformers, tokenizers" 2>/dev/null; then
  echo "skipped: no Python with torch, h5py, numpy, transformers and tokenizers (SLIMTRAIN_TORCH_PYTHON='$PY2'; scripts/install-deps.sh --torch pip makes .torch-venv)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rows=(vit-b16-bf16 cnn-b512 torchscript-vit hf-bert-small mlp-grad-sink cnn-b64
  cnn-b512-channels-last vit-b16-bf16-manual-peer)
libtorch=$("$SLIMTRAIN_BIN" --version | sed -n 's/^  LibTorch  \([0-9]*\)\..*/\1/p')
# bench OUT BUDGET: one rehearsal; rc, out (its output) and wall (seconds) as timed leaves them.
bench() {
  timed env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 BENCH_BIN="$SLIMTRAIN_BIN" \
    BENCH_PY="$PY2" MPIEXEC="${MPIEXEC:-mpirun}" SMALL=1 DEVICE=cpu STEPS=4 WARMUP=2 OUT="$1" \
    BUDGET="$2" bash "$SLIMTRAIN_SOURCE_DIR/bench/gpu/run.sh"
}
# line ROW: that row's line in $res (empty when there is none).
line() { grep "^RESULT gpu row=$1 " "$res"; }
# measured ROW: its line has both sides' samples/s and a ratio.
measured() {
  line "$1" | grep -Eq 'slimtrain_sps=[0-9.]+ peer_sps=[0-9.]+ ratio=[0-9.]+ ' ||
    { echo "  not measured: $(line "$1")"; return 1; }
}
# each_once: every row has exactly one line, and the file nothing but RESULT lines.
each_once() {
  local r n
  for r in "${rows[@]}"; do
    n=$(grep -c "^RESULT gpu row=$r " "$res")
    [ "$n" = 1 ] || { echo "  $r: $n lines in $res"; return 1; }
  done
  [ "$(grep -vc '^RESULT gpu row=' "$res")" = 0 ] || { echo "  not RESULT lines:"; grep -v '^RESULT' "$res"; return 1; }
}

bench "$work/full" 300
res=$work/full/results.txt
check "the rehearsal ends (exit 0, ${wall} s)" eval '[ "$rc" = 0 ] || { echo "$out" | tail -n 20; false; }'
check "  each row's RESULT line in \$OUT/results.txt, once" each_once
for r in "${rows[@]}"; do
  if [ "$r" = torchscript-vit ] && [ "${libtorch:-0}" -lt 2 ] && line "$r" | grep -q 'failed=slimtrain'; then
    check "  $r failed on LibTorch $libtorch, as it may: said, with its log's tail" \
      grep -q '^  ts failed (exit [0-9]*); the end of its log' "$work/full/bench_gpu.txt"
    continue
  fi
  check "  $r measured" measured "$r"
done
check "  utilisation nan on both sides of every measured row (no nvidia-smi)" \
  eval '! grep -v "skipped=" "$res" | grep -vq "slimtrain_util=nan peer_util=nan"'
check "  no shell errors" eval '! grep -Eq "command not found|No such file|syntax error|unbound variable" <<<"$out"'
check "  the table and the end in bench_gpu.txt" grep -q '^bench/gpu: done in' "$work/full/bench_gpu.txt"
check "  every run's log in \$OUT/runs" eval '[ -s "$work/full/runs/vit.log" ] && [ -s "$work/full/runs/hf-peer.log" ] && [ -s "$work/full/runs/mlp-sink.metrics.jsonl" ]'

echo "the first run's RESULT lines:"
sed 's/^/  /' "$res"

# The second run's budget: twice what the first took to its first row (room for a slower second
# run under load), plus the 10 s run.sh keeps for its table and 10 more: the first row or two.
first=$(sed -n 's/^bench\/gpu: row vit-b16-bf16 done at \([0-9]*\) s$/\1/p' "$work/full/bench_gpu.txt")
budget=$(( ${first:-20} * 2 + 20 ))
bench "$work/short" "$budget"
res=$work/short/results.txt
check "a rehearsal with BUDGET=$budget ends in time (${wall} s, exit $rc)" eval '[ "$rc" = 0 ] && [ "$wall" -le $((budget + 2)) ]'
check "  each row named once in \$OUT/results.txt" each_once
check "  the first row measured" measured vit-b16-bf16
check "  the last rows skipped=budget" eval 'line vit-b16-bf16-manual-peer | grep -q " skipped=budget$"'
check "  and named on a last line" eval 'grep -q "^bench/gpu: rows not run: .*vit-b16-bf16-manual-peer (budget)" "$work/short/bench_gpu.txt"'
echo "the second run's RESULT lines:"
sed 's/^/  /' "$res"
finish
