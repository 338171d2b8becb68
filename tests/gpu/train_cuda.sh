#!/usr/bin/env bash
# --device cuda end to end on one GPU: model, batches and gradients on the device, gradients on the
# NCCL data plane, decisions and evaluation statistics on the MPI control plane; then bf16 autocast.
# Skips (77) with slimtrain's own reason where there is no usable GPU or no CUDA LibTorch.
. "$SLIMTRAIN_SOURCE_DIR/tests/e2e/lib.sh"
. "$SLIMTRAIN_SOURCE_DIR/tests/e2e/train_lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
train_data "$work" || exit 1
job=(--data "$work/data.h5" "${SMALL_JOB[@]}" --max-steps 40 --eval-every 20 --checkpoint-every 20)

out=$("$MPIEXEC" -np 1 "$S" train --device cuda --out "$work/probe" --data "$work/data.h5" \
  "${SMALL_JOB[@]}" --max-steps 1 2>&1)
rc=$?
if [ "$rc" -eq 2 ] && grep -q -e "no usable GPU" -e "built without CUDA" <<<"$out"; then
  echo "skipped: $(grep -o -e 'no usable GPU.*' -e 'this slimtrain.*built without CUDA.*' <<<"$out" | head -1)"
  exit 77
fi

R=$work/fp32
check "training on cuda:0" expect_rc 0 timeout 300 "$MPIEXEC" -np 1 "$S" train --device cuda --out "$R" "${job[@]}"
check "  on the device, NCCL data plane" contains "device cuda:0, .*control plane MPI, data plane NCCL"
check "  start event names the device" json_is "$(events "$R" start)" 'e["device"].startswith("cuda:0")'
check "  evaluations ran (control plane)" json_is "$(event_at "$R" eval 20)" 'e["count"] == 203'
check "  it learned" json_is "$(events "$R" done)" 'e["test"]["accuracy"] > 0.5'
check "  the checkpoint loads on CPU" expect_rc 0 "$S" eval --data "$work/data.h5" --checkpoint "$R" --json
check "  with the trainer's test accuracy" json_is "[$(tail -1 <<<"$out"), $(events "$R" done)]" \
  'abs(e[0]["accuracy"] - e[1]["test"]["accuracy"]) < 0.02'

R=$work/bf16
check "bf16 autocast on cuda:0" expect_rc 0 timeout 300 "$MPIEXEC" -np 1 "$S" train --device cuda --precision bf16 --out "$R" "${job[@]}"
check "  precision bf16 in the start event" json_is "$(events "$R" start)" 'e["precision"] == "bf16"'
check "  it learned too" json_is "$(events "$R" done)" 'e["test"]["accuracy"] > 0.5'
finish
