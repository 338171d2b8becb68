#!/usr/bin/env bash
# --device cuda end to end on one GPU: model, batches and gradients on the device, gradients on the
# NCCL data plane, decisions and evaluation statistics on the MPI control plane; then bf16 autocast;
# then --shard gradients (NCCL reduce-scatter and all-gather), its checkpoint resumed on the GPU
# with --shard optimizer and on the CPU.
# Skips (77) with slimtrain's own reason where there is no usable GPU or no CUDA LibTorch.
. "$SLIMTRAIN_SOURCE_DIR/tests/e2e/lib.sh"
. "$SLIMTRAIN_SOURCE_DIR/tests/e2e/train_lib.sh"
. "$SLIMTRAIN_SOURCE_DIR/tests/e2e/resume_lib.sh"
train_work
job=(--data "$work/data.h5" "${SMALL_JOB[@]}" --max-steps 40 --eval-every 20 --checkpoint-every 20)
cuda_or_skip

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

# Sharded on the GPU: AdamW state and gradients cut into shards (one rank: one shard), the
# checkpoints written by the writer threads, resumed with another --shard and on another device.
shard=(--data "$work/data.h5" "${SMALL_JOB[@]}" --optimizer adamw --lr 0.01 --schedule constant
  --eval-every 0 --checkpoint-every 20 --resume auto)
check "--shard gradients on cuda:0, 60 steps" expect_rc 0 timeout 300 "$MPIEXEC" -np 1 "$S" train \
  --device cuda --shard gradients --max-steps 60 --out "$work/whole" "${shard[@]}"
check "  the same run stopped at step 20" expect_rc 0 timeout 300 "$MPIEXEC" -np 1 "$S" train \
  --device cuda --shard gradients --max-steps 20 --out "$work/half" "${shard[@]}"
check "  resumed on cuda:0 with --shard optimizer to step 40" expect_rc 0 timeout 300 "$MPIEXEC" -np 1 \
  "$S" train --device cuda --shard optimizer --max-steps 40 --out "$work/half" "${shard[@]}"
check "  from step 20" contains "resumed from .*step-00000020 at step 20"
check "  and on the CPU with --shard none to step 60" expect_rc 0 timeout 300 "$MPIEXEC" -np 1 "$S" \
  train --device cpu --shard none --max-steps 60 --out "$work/half" "${shard[@]}"
check "  from step 40" contains "resumed from .*step-00000040 at step 40"
check "  step 40 within 1e-5 of the uninterrupted run" within "$work/whole" "$work/half" 40 1e-5
check "  it reached step 60 and learned" json_is "$(events "$work/half" done | tail -n 1)" \
  'e["step"] == 60 and e["test"]["accuracy"] > 0.5'
finish
