#!/usr/bin/env bash
# --model hf:DIR for Qwen2-VL and Qwen2.5-VL against transformers itself (the venv's Python,
# SLIMTRAIN_TORCH_PYTHON), on small random checkpoints (nothing downloaded) and a layout-2 file of
# token ids, pixel_values and image_grid_thw made with Qwen2VLImageProcessor (images of several
# sizes and aspect ratios in one batch, a sample with two images, text-only samples):
# - `eval --predictions` gives the score of transformers' last token (Qwen2(_5)_VLModel) within
#   1e-4: Qwen2-VL in the original key layout (visual.*, model.*) and in transformers 4.52's
#   (model.visual.*, model.language_model.*, text fields at the top level); Qwen2.5-VL with
#   windows smaller than the images and larger; the last token's hidden state itself (an
#   identity score over 64 classes); at np 2 too;
# - a ForConditionalGeneration checkpoint fine-tunes at np 2 on a task that needs the image's
#   colour and a word of the text (majority class ~0.25), resumes at np 1, and its export --hf
#   (Qwen2_5_VLForSequenceClassification) predicts in transformers what eval wrote;
# - a file whose image tokens and images disagree is exit 2 naming both counts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
PY2=${SLIMTRAIN_TORCH_PYTHON:-}
[ -n "$PY2" ] && "$PY2" -c "import torch, transformers, safetensors, h5py, PIL" 2>/dev/null ||
  { echo "skipped: no Python with torch, transformers, safetensors, h5py and pillow (SLIMTRAIN_TORCH_PYTHON='$PY2'; scripts/install-deps.sh --torch pip makes .torch-venv)"; exit 77; }
work=$(new_work)
trap 'rm -rf "$work"' EXIT
vl="$SLIMTRAIN_SOURCE_DIR/tests/e2e/hf_vl.py"
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
{ "$PY2" "$vl" make "$work" && "$PY2" "$vl" task "$work"; } >"$work/make.log" 2>&1 || { cat "$work/make.log"; exit 1; }
np() { timeout 120 "$MPIEXEC" --oversubscribe -np "$@"; }

for m in qwen2vl qwen2vl-new qwen25vl qwen25vl-wide; do
  check "$m: eval --predictions" expect_rc 0 "$S" eval --data "$work/vl.h5" --model "hf:$work/$m" \
    --predictions "$work/p-$m.h5" --threads 1
  check "  transformers' logits within 1e-4" "$PY2" "$vl" logits "$work/$m" "$work/vl.h5" "$work/p-$m.h5"
done
check "  the lm_head is left out, named" contains "left out as transformers leaves them: lm_head.weight"
check "the last token's hidden state (an identity score)" expect_rc 0 "$S" eval \
  --data "$work/vl-hidden.h5" --model "hf:$work/qwen25vl-identity" --predictions "$work/p-id.h5" --threads 1
check "  transformers' within 1e-4" "$PY2" "$vl" logits "$work/qwen25vl-identity" "$work/vl-hidden.h5" "$work/p-id.h5"
check "at np 2" expect_rc 0 np 2 "$S" eval --data "$work/vl.h5" --model "hf:$work/qwen25vl" \
  --predictions "$work/p2.h5" --threads 1
check "  the same logits" "$PY2" "$vl" logits "$work/qwen25vl" "$work/vl.h5" "$work/p2.h5"

recipe=(--data "$work/task.h5" --model "hf:$work/tune" --optimizer adamw --lr 3e-3 --batch-size 16
  --threads 1 --seed 5 --log-every 20)
check "fine-tuning Qwen2.5-VL at np 2" expect_rc 0 np 2 "$S" train "${recipe[@]}" --epochs 6 --out "$work/run"
check "  the score created, named" contains "score.weight newly initialised"
check "  learns colour and word together (majority ~0.25)" json_is "$(events "$work/run" done)" 'e["final"]["accuracy"] > 0.8'
check "  resumed at np 1" expect_rc 0 "$S" train "${recipe[@]}" --epochs 8 --out "$work/run"
check "    from the np-2 checkpoint" contains "resuming a 2-rank checkpoint on 1"
check "eval --predictions of the run" expect_rc 0 "$S" eval --data "$work/task.h5" \
  --checkpoint "$work/run" --predictions "$work/p-run.h5" --threads 1
check "export --hf" expect_rc 0 "$S" export --hf --checkpoint "$work/run" -o "$work/exported"
check "  Qwen2_5_VLForSequenceClassification in transformers predicts what eval wrote" \
  "$PY2" "$vl" agree "$work/exported" "$work/task.h5" "$work/p-run.h5"
check "image tokens and images that disagree: exit 2" expect_rc 2 "$S" eval --data "$work/vl-short.h5" \
  --model "hf:$work/qwen2vl"
check "  naming both counts" contains "<|image_pad|> tokens where its images give"
finish
