#!/usr/bin/env bash
# The GPU step (train/step_update.hpp), run on a CPU under SLIMTRAIN_TEST_DEVICE_STEP=1: fused
# optimizers, the non-finite vote on the data plane, the skip on the device, the host learning it
# a step late. At np 2 against the host's step: AdamW with clipping, SGD with momentum and
# --shard gradients end within 1e-5; a NaN loss on rank 1 at step 5 skips that step everywhere
# (its weights are step 4's, byte for byte) and is named with its rank; a diverging run ends with
# exit 1 at most one step later than the host's step would, every checkpoint finite; a checkpoint
# written with a skipped step resumes in the host's step as the host's own run (about 30 s).
# Needs LibTorch 2.4 (the fused kernels); the 1.13 build skips it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/resume_lib.sh"
major=$("$S" --version | sed -n 's/^  LibTorch  \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
read -r maj min <<<"$major"
if [ "${maj:-0}" -lt 2 ] || { [ "$maj" = 2 ] && [ "${min:-0}" -lt 4 ]; }; then
  echo "skipped: LibTorch $maj.$min has no fused optimizers (2.4 on): the device's step needs them (the 2.x build runs this)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
train_data "$work" || exit 1
MPI=(timeout 120 "$MPIEXEC" -np 2)
base=(--data "$work/data.h5" --batch-size 16 --threads 1 --schedule constant --seed 3
  --eval-every 0 --final-split none --log-every 10 --resume auto)
mlp=("${base[@]}" --model mlp --mlp-widths 32,16)
device() { SLIMTRAIN_TEST_DEVICE_STEP=1 "$@"; }
pair() {  # pair NAME STEPS OPTIONS...: the host's step and the device's, same job
  local name=$1 steps=$2; shift 2
  "${MPI[@]}" "$S" train "$@" --max-steps "$steps" --checkpoint-every "$steps" --out "$work/$name-host" >/dev/null 2>&1 &&
    out=$(device "${MPI[@]}" "$S" train "$@" --max-steps "$steps" --checkpoint-every "$steps" \
      --out "$work/$name-device" 2>&1)
}

check "AdamW with clipping, the device's step" pair adamw 30 "${mlp[@]}" --optimizer adamw --lr 0.01 --clip-grad-norm 0.5
check "  says so at start-up" contains "the step on the device (fused optimizer, no read-back)"
check "  within 1e-5 of the host's step at step 30" within "$work/adamw-host" "$work/adamw-device" 30 1e-5
check "SGD with momentum and Nesterov" pair sgd 30 "${mlp[@]}" --optimizer sgd --lr 0.05 --momentum 0.9 --nesterov true
check "  within 1e-5" within "$work/sgd-host" "$work/sgd-device" 30 1e-5
check "--shard gradients, AdamW" pair shard 30 "${mlp[@]}" --optimizer adamw --lr 0.01 --shard gradients --bucket-mb 0.002
check "  within 1e-5" within "$work/shard-host" "$work/shard-device" 30 1e-5

nan=(SLIMTRAIN_INJECT="rank=1,phase=train,step=5,action=nan")
sgd=("${mlp[@]}" --optimizer sgd --lr 0.05 --momentum 0.9)
check "4 steps, the reference" expect_rc 0 device "${MPI[@]}" "$S" train "${sgd[@]}" --max-steps 4 --out "$work/four"
check "a NaN loss on rank 1 at step 5 of 5" expect_rc 0 env "${nan[@]}" SLIMTRAIN_TEST_DEVICE_STEP=1 \
  "${MPI[@]}" "$S" train "${sgd[@]}" --max-steps 5 --out "$work/five"
check "  named with its step and rank" contains "step 5: the loss is not finite on rank 1 (.*): its update is skipped on every rank (1 in a row"
check "  one nonfinite event" json_is "[$(events "$work/five" nonfinite | tr '\n' ',' | sed 's/,$//')]" \
  'len(e) == 1 and e[0]["step"] == 5'
check "  step 5's weights are step 4's, byte for byte" cmp "$work/four/checkpoints/step-00000004/tensors.bin" \
  "$work/five/checkpoints/step-00000005/tensors.bin"

check "cnn-small at --lr 50 diverges: exit 1" expect_rc 1 device "${MPI[@]}" "$S" train "${base[@]}" \
  --model cnn-small --optimizer sgd --momentum 0.9 --lr 50 --max-steps 400 --checkpoint-every 4 \
  --keep-last 100 --max-nonfinite-steps 3 --out "$work/diverged"
check "  naming the steps and the option" contains "training diverged: [34] steps in a row ([0-9]* to [0-9]*) had a non-finite loss or gradient norm and updated nothing (--max-nonfinite-steps 3)"
check "  at most one step later than the host's step" json_is "$(events "$work/diverged" failed)" \
  'e["step"] <= e["first_nonfinite_step"] + 3'
for ckpt in "$work/diverged"/checkpoints/step-*; do
  "$S" export --checkpoint "$ckpt" -o "$work/$(basename "$ckpt").h5" >/dev/null 2>&1 || exit 1
done
check "  every checkpoint finite" "$PY" -c '
import glob, sys, h5py, numpy as np
files = glob.glob(sys.argv[1] + "/step-*.h5")
assert files
for f in files:
    with h5py.File(f) as h:
        for n in h:
            if isinstance(h[n], h5py.Dataset):
                assert np.isfinite(h[n][()]).all(), (f, n)' "$work"

# AdamW's step counts: a skipped step counts on neither side, so a device checkpoint resumed in
# the host's step continues as the host's own run.
adamw=("${mlp[@]}" --optimizer adamw --lr 0.01 --checkpoint-every 20)
check "AdamW with a NaN at step 5, the host's step to 20 and on to 40" expect_rc 0 env "${nan[@]}" \
  "${MPI[@]}" "$S" train "${adamw[@]}" --max-steps 20 --out "$work/counts-host"
"${MPI[@]}" "$S" train "${adamw[@]}" --max-steps 40 --out "$work/counts-host" >/dev/null 2>&1
check "the same on the device to 20" expect_rc 0 env "${nan[@]}" SLIMTRAIN_TEST_DEVICE_STEP=1 \
  "${MPI[@]}" "$S" train "${adamw[@]}" --max-steps 20 --out "$work/counts-device"
check "  resumed on the host's step to 40" expect_rc 0 "${MPI[@]}" "$S" train "${adamw[@]}" \
  --max-steps 40 --out "$work/counts-device"
check "  within 1e-5 of the host's own run at step 40" within "$work/counts-host" "$work/counts-device" 40 1e-5
finish
