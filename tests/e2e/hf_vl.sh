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
# - prep text --image-column (images of several sizes, PNG and JPEG, one or two a record, or
#   none) gives the processing's input_ids, image_grid_thw and pixel_values (tests/e2e/prep_vl.py:
#   Qwen2VLImageProcessor, Qwen2-VL-7B-Instruct's chat template, the placeholders expanded as
#   Qwen2VLProcessor does), with and without the chat template; a missing image is exit 2;
# - a ForConditionalGeneration checkpoint fine-tunes at np 2 on that file, a task that needs the
#   image's colour and a word of the text, resumes at np 1, and its export --hf (with the
#   tokenizer, chat template and processor files) predicts in transformers what eval wrote;
#   with --shard parameters (the language model loaded into shards) it logs --shard gradients'
#   losses; trained with --lora, its adapter on the base through PEFT predicts what eval wrote;
# - a file whose image tokens and images disagree is exit 2 naming both counts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
PY2=${SLIMTRAIN_TORCH_PYTHON:-}
[ -n "$PY2" ] && "$PY2" -c "import torch, transformers, safetensors, h5py, PIL" 2>/dev/null ||
  { echo "skipped: no Python with torch, transformers, safetensors, h5py and pillow (SLIMTRAIN_TORCH_PYTHON='$PY2'; scripts/install-deps.sh --torch pip makes .torch-venv)"; exit 77; }
new_work
vl="$SLIMTRAIN_SOURCE_DIR/tests/e2e/hf_vl.py"
export HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
py_start "$PY2"
prep="$SLIMTRAIN_SOURCE_DIR/tests/e2e/prep_vl.py"
{ py "$vl" make "$work" && py "$prep" make "$work/prep"; } >"$work/make.log" 2>&1 ||
  { cat "$work/make.log"; exit 1; }
printf 'image,text,label\nimages/nowhere.png,a shape on the left,0\n' >"$work/prep/missing.csv"
np() { timeout 120 "$MPIEXEC" --oversubscribe -np "$@"; }

for m in qwen2vl qwen2vl-new qwen25vl qwen25vl-wide; do
  check "$m: eval --predictions" expect_rc 0 "$S" eval --data "$work/vl.h5" --model "hf:$work/$m" \
    --predictions "$work/p-$m.h5" --threads 1
  check "  transformers' logits within 1e-4" py "$vl" logits "$work/$m" "$work/vl.h5" "$work/p-$m.h5"
done
check "  the lm_head is left out, named" contains "left out as transformers leaves them: lm_head.weight"
check "the last token's hidden state (an identity score)" expect_rc 0 "$S" eval \
  --data "$work/vl-hidden.h5" --model "hf:$work/qwen25vl-identity" --predictions "$work/p-id.h5" --threads 1
check "  transformers' within 1e-4" py "$vl" logits "$work/qwen25vl-identity" "$work/vl-hidden.h5" "$work/p-id.h5"
check "at np 2" expect_rc 0 np 2 "$S" eval --data "$work/vl.h5" --model "hf:$work/qwen25vl" \
  --predictions "$work/p2.h5" --threads 1
check "  the same logits" py "$vl" logits "$work/qwen25vl" "$work/vl.h5" "$work/p2.h5"

check "prep text --image-column: images and text as Qwen2-VL's processor makes them" expect_rc 0 \
  "$S" prep text --train "$work/prep/train.csv" --test "$work/prep/test.csv" --image-column image \
  --image-column image2 --text-column text --label-column label --tokenizer "$work/prep/ckpt/tokenizer.json" \
  -o "$work/task.h5"
check "  in the chat template's user turn" contains "the text in the chat template's user turn"
check "  the processor's ids, grids and pixel_values (test)" py "$prep" compare "$work/prep" "$work/task.h5" test
check "  (train)" py "$prep" compare "$work/prep" "$work/task.h5" train
check "--no-chat-template" expect_rc 0 "$S" prep text --train "$work/prep/train.csv" \
  --image-column image --image-column image2 --text-column text --label-column label \
  --tokenizer "$work/prep/ckpt/tokenizer.json" --no-chat-template -o "$work/plain.h5"
check "  the processor's, the placeholders before the text" py "$prep" compare "$work/prep" "$work/plain.h5" train plain
check "an image that is not there: exit 2" expect_rc 2 "$S" prep text --train "$work/prep/missing.csv" \
  --image-column image --text-column text --label-column label \
  --tokenizer "$work/prep/ckpt/tokenizer.json" -o "$work/missing.h5"
check "  naming the record and the image" contains "missing.csv: line 2, image"
check "  nothing left behind" eval '[ ! -e "$work/missing.h5" ]'

recipe=(--data "$work/task.h5" --model "hf:$work/prep/ckpt" --optimizer adamw --lr 1e-3 --batch-size 16
  --threads 1 --seed 5 --log-every 40)
check "fine-tuning Qwen2.5-VL at np 2 on what prep made" expect_rc 0 np 2 "$S" train "${recipe[@]}" \
  --epochs 16 --out "$work/run"
check "  the score created, named" contains "score.weight newly initialised"
check "  learns colour and word together (majority ~0.3, the word alone ~0.5)" json_is "$(events "$work/run" done)" 'e["final"]["accuracy"] > 0.7'
check "  resumed at np 1" expect_rc 0 "$S" train "${recipe[@]}" --epochs 18 --out "$work/run"
check "    from the np-2 checkpoint" contains "resuming a 2-rank checkpoint on 1"
# --shard parameters: the language model made without memory and read into each rank's shard
# (Qwen2-VL does not gate its layers: its weights are gathered whole for each forward and each
# evaluation, and freed after): the losses and the evaluation of --shard gradients.
for mode in gradients parameters; do
  check "Qwen2.5-VL np 2 --shard $mode, 20 steps" expect_rc 0 np 2 "$S" train --data "$work/task.h5" \
    --model "hf:$work/prep/ckpt" --optimizer adamw --lr 1e-3 --batch-size 16 --threads 1 --seed 5 \
    --max-steps 20 --log-every 4 --eval-every 10 --eval-batch-size 7 --final-split none \
    --shard "$mode" --out "$work/z-$mode"
done
check "  each rank read only its shard's elements, said" contains "tensors loaded (.*), each rank reading only its shard's elements (--shard parameters)"
check "  losses within 1e-6 relative" same_losses "$work/z-gradients" "$work/z-parameters" 5 1e-6
check "  and its evaluation" \
  same_losses "$work/z-gradients" "$work/z-parameters" 1 1e-6 eval
check "eval --predictions of the run" expect_rc 0 "$S" eval --data "$work/task.h5" \
  --checkpoint "$work/run" --predictions "$work/p-run.h5" --threads 1
check "export --hf" expect_rc 0 "$S" export --hf --checkpoint "$work/run" -o "$work/exported"
check "  with the tokenizer, the chat template and the processor settings" eval \
  '[ -f "$work/exported/tokenizer.json" ] && [ -f "$work/exported/tokenizer_config.json" ] && [ -f "$work/exported/preprocessor_config.json" ]'
check "  Qwen2_5_VLForSequenceClassification in transformers predicts what eval wrote" \
  py "$vl" agree "$work/exported" "$work/task.h5" "$work/p-run.h5"
# --lora on the language model's attention: PEFT's adapter on the same base predicts what eval wrote.
check "Qwen2.5-VL with --lora (its language model's attention) at np 2" expect_rc 0 np 2 "$S" train \
  "${recipe[@]}" --lora r=4,targets=q_proj,k_proj,v_proj,o_proj --max-steps 10 --out "$work/lora"
check "  eval --predictions" expect_rc 0 "$S" eval --data "$work/task.h5" --checkpoint "$work/lora" \
  --predictions "$work/p-lora.h5" --threads 1
check "  export --hf: PEFT's adapter" expect_rc 0 "$S" export --hf --checkpoint "$work/lora" \
  -o "$work/adapter"
check "    PeftModel.from_pretrained on the base predicts what eval wrote" \
  py "$vl" peft_agree "$work/prep/ckpt" "$work/adapter" "$work/task.h5" "$work/p-lora.h5"
check "image tokens and images that disagree: exit 2" expect_rc 2 "$S" eval --data "$work/vl-short.h5" \
  --model "hf:$work/qwen2vl"
check "  naming both counts" contains "<|image_pad|> tokens where its images give"
finish
