#!/usr/bin/env bash
# PyTorch 2.x beside Debian's 1.13, run in the 2.x build (SLIMTRAIN_BIN) against the 1.13 build
# (SLIMTRAIN_INTEROP_BIN) with the venv's Python (SLIMTRAIN_TORCH_PYTHON):
# - a module scripted by PyTorch 2.x that calls scaled dot-product attention trains at np 2 here;
#   the 1.13 build refuses it (exit 2, one line, naming the operator and its LibTorch version);
# - a checkpoint written by the 1.13 build (AdamW state, mid-epoch) resumes here, and one written
#   here resumes in the 1.13 build: after 20 more steps each equals the writer's own resume
#   within 1e-6, relative to each tensor's largest value (the two LibTorches' BLAS round apart);
# - `slimtrain export` of both builds loads in the 2.x Python: the HDF5 weights with h5py, the
#   TorchScript module with torch.jit.load, which gives slimtrain eval's accuracy and loss.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/resume_lib.sh"
S1=${SLIMTRAIN_INTEROP_BIN:-}
PY2=${SLIMTRAIN_TORCH_PYTHON:-}
if [ -z "$S1" ] || ! [ -x "$S1" ]; then
  echo "skipped: no LibTorch 1.13 build of slimtrain to compare with (SLIMTRAIN_INTEROP_BIN='$S1'; scripts/test.sh builds both)"
  exit 77
fi
[ -n "$PY2" ] && "$PY2" -c "import torch, h5py" 2>/dev/null ||
  { echo "skipped: no PyTorch 2.x Python (SLIMTRAIN_TORCH_PYTHON='$PY2')"; exit 77; }
v1=$("$S1" --version | sed -n 's/^  LibTorch  \([0-9.]*\).*/\1/p')
v2=$("$S" --version | sed -n 's/^  LibTorch  \([0-9.]*\).*/\1/p')
echo "this build: LibTorch $v2; the other: LibTorch $v1 ($S1); Python: $("$PY2" -c 'import torch; print(torch.__version__)')"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
make_data "$work" || exit 1
D=$work/data.h5
MPI=(timeout 120 "$MPIEXEC" -np 2)

"$PY2" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/interop_models.py" "$work/sdpa.pt" || exit 1
ts_job=(--data "$D" --batch-size 16 --threads 1 --eval-every 0 --log-every 10 --seed 4)
check "a 2.x-scripted module with scaled dot-product attention trains at np 2" expect_rc 0 \
  "${MPI[@]}" "$S" train "${ts_job[@]}" --model "torchscript:$work/sdpa.pt" --optimizer adamw \
  --lr 0.01 --max-steps 120 --out "$work/sdpa"
check "  and learns (test accuracy above 0.5 with 4 classes)" \
  json_is "$(events "$work/sdpa" done)" 'e["final"]["accuracy"] > 0.5'
check "the 1.13 build refuses it, exit 2" expect_rc 2 "$S1" train "${ts_job[@]}" \
  --model "torchscript:$work/sdpa.pt" --max-steps 2 --out "$work/sdpa-1"
check "  in one line naming the operator and LibTorch $v1" eval \
  '[ "$(wc -l <<<"$out")" = 1 ] && grep -q "sdpa.pt: uses aten::scaled_dot_product_attention, an operator LibTorch $v1 does not have" <<<"$out"'
check "  leaving no run directory" test ! -e "$work/sdpa-1"

# Checkpoints across the two builds: AdamW (its moments and step count are in the archive), the
# resume mid-epoch (512 samples / 32 per step: epoch 1 step 4 at step 20).
job=(--data "$D" --model mlp --mlp-widths 32,16 --batch-size 16 --threads 1 --optimizer adamw
  --lr 0.01 --schedule constant --eval-every 0 --final-split none --checkpoint-every 10
  --log-every 10 --seed 3)
across() {  # across WRITER READER NAME: WRITER to step 20, then both resume it to step 40
  local w=$1 r=$2 a=$work/$3-own b=$work/$3-other
  "${MPI[@]}" "$w" train "${job[@]}" --max-steps 20 --out "$a" >"$work/$3.log" 2>&1 ||
    { echo "  the writer failed:"; tail -5 "$work/$3.log"; return 1; }
  cp -r "$a" "$b"
  "${MPI[@]}" "$w" train "${job[@]}" --max-steps 40 --out "$a" >>"$work/$3.log" 2>&1 ||
    { echo "  the writer's own resume failed:"; tail -5 "$work/$3.log"; return 1; }
  out=$("${MPI[@]}" "$r" train "${job[@]}" --max-steps 40 --out "$b" 2>&1) ||
    { echo "  the other build's resume failed:"; echo "$out" | tail -5; return 1; }
}
check "a 1.13 checkpoint resumed by the 2.x build" across "$S1" "$S" to2
check "  from step 20" contains "resumed from .*step-00000020 at step 20 (epoch 1, step 4 in epoch)"
check "  equals 1.13's own resume at step 40 within 1e-6" within "$work/to2-own" "$work/to2-other" 40 1e-6
check "a 2.x checkpoint resumed by the 1.13 build" across "$S" "$S1" to1
check "  from step 20" contains "resumed from .*step-00000020 at step 20 (epoch 1, step 4 in epoch)"
check "  equals 2.x's own resume at step 40 within 1e-6" within "$work/to1-own" "$work/to1-other" 40 1e-6

# export from both builds, read by PyTorch 2.x.
M=$work/models
mkdir -p "$M"
/usr/bin/python3 "$SLIMTRAIN_SOURCE_DIR/tests/e2e/torchscript_models.py" "$M" 1 8 8 4 >/dev/null || exit 1
for b in 1 2; do
  bin=$S; [ "$b" = 1 ] && bin=$S1
  R=$work/export-$b
  check "LibTorch $([ "$b" = 1 ] && echo "$v1" || echo "$v2")'s build trains a 1.13-scripted module" \
    expect_rc 0 "${MPI[@]}" "$bin" train "${ts_job[@]}" --model "torchscript:$M/plain.pt" \
    --max-steps 20 --out "$R"
  check "  export -o weights.h5" expect_rc 0 "$bin" export --checkpoint "$R" -o "$R/w.h5"
  check "  h5py in the 2.x Python reads every tensor" eval \
    "\"\$PY2\" -c 'import h5py, sys; f = h5py.File(sys.argv[1], \"r\"); n = []; f.visititems(lambda k, v: n.append(k) if isinstance(v, h5py.Dataset) else None); sys.exit(0 if len(n) >= 4 else 1)' \"$R/w.h5\""
  check "  export --torchscript" expect_rc 0 "$bin" export --torchscript --checkpoint "$R" -o "$R/t.pt"
  check "  slimtrain eval" expect_rc 0 "$bin" eval --data "$D" --checkpoint "$R" --json
  ours=$(tail -1 <<<"$out")
  check "  torch.jit.load in the 2.x Python" expect_rc 0 "$PY2" \
    "$SLIMTRAIN_SOURCE_DIR/tests/e2e/torchscript_check.py" eval "$R/t.pt" "$D" test
  theirs=$(tail -1 <<<"$out")
  check "  gives slimtrain eval's accuracy and loss" json_is "[$ours, $theirs]" \
    'e[0]["accuracy"] == e[1]["accuracy"] and abs(e[0]["loss"] - e[1]["loss"]) < 1e-5 and e[0]["count"] == e[1]["count"]'
done
finish
