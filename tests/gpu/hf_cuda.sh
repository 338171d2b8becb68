#!/usr/bin/env bash
# HuggingFace models on cuda:0 (issues 58 and 59), on small random checkpoints transformers writes
# (tests/e2e/hf_models.py; nothing downloaded):
# - Qwen2 with --shard parameters: built without memory for its weights, read into this rank's
#   shard on the GPU, each layer gathered and freed on NCCL in forward and backward, its
#   evaluations gathered layer by layer (small buckets: a layer is a few): the losses and evaluations of --shard gradients (fp32,
#   within 1e-5 relative: TF32 is off for this comparison); in bf16 it trains to finite losses;
# - --activation-checkpointing layers replays the CUDA generator: BERT (dropout 0.1) and Qwen2 log
#   the losses they log without it;
# - the steady step waits for nothing with layers gathered or recomputed: CUDA's synchronisation
#   debug mode "error" from step 5 to 35 (as tests/gpu/sync_free.sh) for Qwen2 with --shard
#   parameters (fp32; bf16 with clipping) and with --activation-checkpointing layers.
# Skips (77) with slimtrain's own reason where there is no usable GPU or no CUDA LibTorch, or where
# no Python has torch, transformers, safetensors and h5py.
. "$SLIMTRAIN_SOURCE_DIR/tests/e2e/lib.sh"
. "$SLIMTRAIN_SOURCE_DIR/tests/e2e/train_lib.sh"
train_work
cuda_or_skip
PY2=${SLIMTRAIN_TORCH_PYTHON:-}
[ -n "$PY2" ] && [ -x "$PY2" ] || PY2=/opt/torch/.venv/bin/python3  # the lent GPU machines' Python
"$PY2" -c "import torch, transformers, safetensors, h5py" 2>/dev/null ||
  { echo "skipped: no Python with torch, transformers, safetensors and h5py (SLIMTRAIN_TORCH_PYTHON='${SLIMTRAIN_TORCH_PYTHON:-}')"; exit 77; }
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
"$PY2" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/hf_models.py" make_small "$work" || exit 1
T=$work/text.h5
cuda() { timeout 300 "$MPIEXEC" -np 1 "$S" train --device cuda --data "$T" --optimizer adamw \
  --lr 1e-3 --batch-size 8 --threads 1 --seed 5 --log-every 5 "$@"; }

for mode in gradients parameters; do
  check "qwen2 on cuda:0 --shard $mode, 30 steps, evaluating every 10" expect_rc 0 cuda \
    --model "hf:$work/qwen2-tune" --max-steps 30 --eval-every 10 --tf32 off --bucket-mb 0.004 --shard "$mode" \
    --out "$work/z-$mode"
done
check "  read into this rank's shard" contains "each rank reading only its shard's elements"
check "  the same losses" same_losses "$work/z-gradients" "$work/z-parameters" 6 1e-5
check "  the same evaluations" same_losses "$work/z-gradients" "$work/z-parameters" 3 1e-5 eval
check "  gathered layer by layer in evaluation" json_is "$(events "$work/z-parameters" eval | tail -n 1)" \
  'e["gathered_peak_bytes"] < e["weights_whole_bytes"]'
check "qwen2 on cuda:0 --shard parameters --precision bf16" expect_rc 0 cuda \
  --model "hf:$work/qwen2-tune" --max-steps 20 --eval-every 0 --precision bf16 \
  --shard parameters --out "$work/z-bf16"
check "  finite losses" json_is "$(events "$work/z-bf16" done)" 'e["step"] == 20'

for m in bert qwen2-tune; do
  for ac in none layers; do
    check "$m on cuda:0 --activation-checkpointing $ac, 20 steps" expect_rc 0 cuda \
      --model "hf:$work/$m" --max-steps 20 --eval-every 0 --final-split none --tf32 off \
      --activation-checkpointing "$ac" --out "$work/ac-$m-$ac"
  done
  check "  the same losses" same_losses "$work/ac-$m-none" "$work/ac-$m-layers" 4 1e-5
done

# 512 training rows in batches of 8: no epoch's end (a progress line, which reads the loss) and no
# log step in the window.
window() {  # window NAME OPTIONS...
  SLIMTRAIN_TEST_SYNC_DEBUG=5-35 expect_rc 0 timeout 300 "$MPIEXEC" -np 1 "$S" train --device cuda \
    --data "$T" --model "hf:$work/qwen2-tune" --optimizer adamw --lr 1e-3 --batch-size 8 --threads 1 \
    --max-steps 40 --log-every 1000 --eval-every 0 --checkpoint-every 0 --final-split none \
    --resume none --out "$work/w-$1" "${@:2}"
}
check "30 steps with no synchronisation: --shard parameters" window p --shard parameters --bucket-mb 0.004
check "  the window closed again" contains "CUDA synchronisation debug mode off from step 35"
check "  and in bf16 with clipping" window pb --shard parameters --precision bf16 --clip-grad-norm 1
check "  and with --activation-checkpointing layers" window ac --activation-checkpointing layers
finish
