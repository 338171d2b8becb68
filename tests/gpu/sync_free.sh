#!/usr/bin/env bash
# A steady GPU step never waits for the device: with CUDA's synchronisation debug mode set to
# "error" from step 5 to step 35 (SLIMTRAIN_TEST_SYNC_DEBUG, train/sync_debug.hpp), any read-back
# or blocking copy in those steps throws and ends the run with exit 1. Trained on cuda:0 without
# logging, evaluating, checkpointing or an epoch's end (a progress line reads the loss) inside the
# window (batches of 8: 48 steps an epoch): a built-in model (cnn-small, SGD), AdamW
# with clipping in bf16, a TorchScript model, and --shard gradients. Skips (77) with slimtrain's
# own reason where there is no usable GPU or no CUDA LibTorch.
. "$SLIMTRAIN_SOURCE_DIR/tests/e2e/lib.sh"
. "$SLIMTRAIN_SOURCE_DIR/tests/e2e/train_lib.sh"
train_work
cuda_or_skip
"$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/torchscript_models.py" "$work" 1 8 8 4 >/dev/null || exit 1
steady=(--data "$work/data.h5" --batch-size 8 --threads 1 --max-steps 40 --log-every 1000
  --eval-every 0 --checkpoint-every 0 --final-split none --resume none --device cuda)
window() {  # window NAME OPTIONS...: one run with the debug mode on from step 5 to 35
  SLIMTRAIN_TEST_SYNC_DEBUG=5-35 expect_rc 0 timeout 300 "$MPIEXEC" -np 1 "$S" train \
    "${steady[@]}" --out "$work/$1" "${@:2}"
}
check "cnn-small, SGD: 30 steps with no synchronisation" window cnn --model cnn-small --optimizer sgd --momentum 0.9 --lr 0.05
check "  the window was open" contains "CUDA synchronisation debug mode error from step 5"
check "  and the step ran on the device" contains "the step on the device (fused optimizer, no read-back)"
check "mlp, AdamW, clipping, bf16" window mlp --model mlp --mlp-widths 64,32 --optimizer adamw --lr 0.01 --clip-grad-norm 1.0 --precision bf16
check "a TorchScript model" window script --model "torchscript:$work/cnn.pt" --optimizer sgd --lr 0.05
check "--shard gradients" window shard --model mlp --mlp-widths 64,32 --optimizer adamw --lr 0.01 --shard gradients --bucket-mb 0.002
check "  and the window closed again" contains "CUDA synchronisation debug mode off from step 35"
finish
