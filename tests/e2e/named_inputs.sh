#!/usr/bin/env bash
# Layout version 2, the seeds' shape: a file (written with h5py) of images and token sequences of
# any length, and a TorchScript model whose forward(pixel_values, input_ids, attention_mask)
# returns a dict with logits and hidden_states. It trains at np 1, 2 and 3, every evaluation
# sample counted once and only statistics sent; hidden_states is dropped at the slim boundary and
# named; --group-by-length resumes bit-identically after kill -9; inspect shows each input and
# --validate finds malformed offsets and token ids out of the vocabulary; a model that does not
# take the file's inputs, a built-in model and the stream mode exit 2 naming both sides.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/resume_lib.sh"
"$PY" -c "import torch, h5py, numpy" 2>/dev/null || { echo "skipped: $PY lacks torch, h5py or numpy"; exit 77; }
work=$(mktemp -d)
job=
trap '[ -n "$job" ] && kill_job; rm -rf "$work"' EXIT
"$PY" "$(dirname "$0")/named_inputs.py" "$work" || exit 1
D=$work/mm.h5
train_data "$work" && mv "$work/data.h5" "$work/v1.h5" || exit 1
base=(--batch-size 8 --threads 1 --log-every 10 --optimizer adamw --lr 0.01 --schedule constant
  --seed 3 --eval-every 0)
recipe=(--data "$D" --model "torchscript:$work/mm.pt" "${base[@]}")
np() { timeout 120 "$MPIEXEC" --oversubscribe -np "$@"; }

check "inspect shows each input" expect_rc 0 "$S" inspect --validate "$D"
check "  | layout version 2" contains "layout version 2"
check "  | the image input" contains "pixel_values: uint8 \[120, 3, 8, 8\]"
check "  | the sequences' lengths" contains "input_ids: int64 ragged, .* values; lengths min 1, median .*, max 40; pad_id 0, vocab_size 50; batched with attention_mask"
check "  | valid" contains "conforms to layout version 2"
check "--validate finds offsets that decrease" expect_rc 2 "$S" inspect --validate "$work/bad-offsets.h5"
check "  naming file, dataset and row" contains "bad-offsets.h5: /train/inputs/input_ids/offsets row 5"
check "--validate finds a token id outside the vocabulary" expect_rc 2 "$S" inspect --validate "$work/bad-ids.h5"
check "  naming file, dataset, row and id" contains "bad-ids.h5: /train/inputs/input_ids/values row 7: token id 60 is outside \[0, 50)"

for n in 1 2 3; do
  check "np $n: the multimodal model trains" expect_rc 0 np "$n" "$S" train "${recipe[@]}" \
    --epochs 3 --out "$work/np$n"
  check "  every test sample counted once" json_is "$(events "$work/np$n" done)" \
    'e["final"]["count"] == 37'
  check "  and it learned (accuracy above chance)" json_is "$(events "$work/np$n" done)" \
    'e["final"]["accuracy"] > 0.4'
done
check "  hidden_states dropped at the slim boundary and named" contains "beside the logits: 'hidden_states' float32 \[8,24\]"
check "  the evaluation sent only its statistics (2 + 3*4 + 4^2 words)" json_is "$(events "$work/np3" eval)" \
  'e["bytes_sent"] <= (2 + 12 + 16) * 8'
check "slimtrain eval reads the checkpoint and the file" expect_rc 0 "$S" eval --checkpoint "$work/np2" --data "$D" --split test
check "  all 37" contains "37"

# --group-by-length: kill -9 after the step-20 checkpoint, --resume auto, weights as uninterrupted.
grouped=("${recipe[@]}" --group-by-length true --max-steps 40 --checkpoint-every 20)
check "--group-by-length at np 2, 40 steps" expect_rc 0 np 2 "$S" train "${grouped[@]}" --out "$work/grouped"
SLIMTRAIN_INJECT="rank=1,phase=train,step=25,action=hang" start_job "$work/kill.log" \
  --oversubscribe -np 2 "$S" train "${grouped[@]}" --out "$work/resumed"
wait_until 60 grep -qs "fault injection" "$work/kill.log" && wait_until 30 latest_is "$work/resumed" 20
reached=$?
kill_job
job=
check "kill -9 after the step-20 checkpoint" test "$reached" -eq 0
check "  resumed" expect_rc 0 np 2 "$S" train "${grouped[@]}" --out "$work/resumed"
check "  from step 20" contains "resumed from .*step-00000020 at step 20"
check "  weights bit-identical to the uninterrupted run" same_weights "$work/grouped" "$work/resumed" 40
check "--max-length 16 cuts the sequences" expect_rc 0 "$S" train "${recipe[@]}" --max-steps 5 \
  --max-length 16 --out "$work/cut"

# The built-in text classifiers on token sequences alone.
text=(--data "$work/text.h5" --batch-size 16 --threads 1 --log-every 10 --optimizer adamw
  --schedule constant --seed 3 --eval-every 0 --group-by-length true)
check "text-bow (fastText's model) trains at np 2" expect_rc 0 np 2 "$S" train "${text[@]}" \
  --lr 0.1 --epochs 6 --model text-bow --out "$work/bow"
check "  it learned the marker tokens" json_is "$(events "$work/bow" done)" 'e["final"]["accuracy"] > 0.8'
check "  with hashed bigrams too" expect_rc 0 np 2 "$S" train "${text[@]}" --lr 0.1 --epochs 1 \
  --model text-bow --text-bigrams 1000 --out "$work/bigrams"
check "  the start line names its vocabulary and buckets" contains "text-bow classes 4 vocab 200 dim 64 bigram-buckets 1000"
# The run's story (issue 60): the optimizer at start, progress at the first step and at the end
# of each epoch (not only every --log-every), the total time and throughput at the end.
check "  the optimizer, its learning rate and schedule at start" \
  contains "INFO  optimizer adamw (lr 0.1, betas 0.9/0.999, eps 1e-08, weight decay 0); learning rate: constant"
check "  a progress line at the first step" contains "epoch 0  step 1/13  loss"
check "  and at the epoch's end" contains "epoch 0 done  step 13/13  loss"
check "  the total time and throughput at the end" \
  grep -Eq "INFO  done at step 13: 13 steps trained in [0-9m.]+s \([0-9.]+ samples/s in all" <<<"$out"
check "  a finished run run again says so" expect_rc 0 np 2 "$S" train "${text[@]}" --lr 0.1 \
  --epochs 1 --model text-bow --text-bigrams 1000 --out "$work/bigrams"
check "    (the line)" contains "is already finished: step 13 of 13, nothing left to train"
check "text-transformer trains at np 2" expect_rc 0 np 2 "$S" train "${text[@]}" --lr 0.01 \
  --epochs 4 --model text-transformer --text-dim 32 --out "$work/transformer"
check "  it learned too" json_is "$(events "$work/transformer" done)" 'e["final"]["accuracy"] > 0.6'
check "text-bow on the multimodal file exits 2" expect_rc 2 "$S" train --data "$D" "${base[@]}" \
  --model text-bow --max-steps 2 --out "$work/x"
check "  naming the input it leaves unused" contains "the file's input 'pixel_values' is not an argument of forward"
check "a token id outside the vocabulary exits 2" expect_rc 2 "$S" train --model "torchscript:$work/mm.pt" "${base[@]}" --data "$work/bad-ids.h5" \
  --max-steps 2 --out "$work/x"
check "  naming file, dataset, row and id" contains "bad-ids.h5: /train/inputs/input_ids/values row 7: token id 60"
check "offsets that decrease exit 2" expect_rc 2 "$S" train --model "torchscript:$work/mm.pt" "${base[@]}" --data "$work/bad-offsets.h5" \
  --max-steps 2 --out "$work/x"
check "  naming file, dataset and row" contains "bad-offsets.h5: /train/inputs/input_ids/offsets row 5"
check "forward taking an input the file lacks exits 2" expect_rc 2 "$S" train --data "$D" "${base[@]}" \
  --model "torchscript:$work/extra.pt" --max-steps 2 --out "$work/x"
check "  naming both lists" contains "forward's argument 'token_type_ids' is not an input: forward takes (pixel_values, input_ids, attention_mask, token_type_ids); the batches hold (input_ids, attention_mask, pixel_values)"
check "forward leaving one of the file's inputs unused exits 2" expect_rc 2 "$S" train --data "$D" "${base[@]}" \
  --model "torchscript:$work/text.pt" --max-steps 2 --out "$work/x"
check "  naming it" contains "the file's input 'pixel_values' is not an argument of forward"
check "a built-in model on named inputs exits 2" expect_rc 2 "$S" train --data "$D" "${base[@]}" --model mlp \
  --max-steps 2 --out "$work/x"
check "  saying why" contains "built-in image and feature models read one input x"
check "text-bow on a file of one input x (layout 1) exits 2" expect_rc 2 "$S" train --data "$work/v1.h5" \
  --model text-bow --max-steps 2 --out "$work/x"
check "  saying why" contains "reads token sequences (input_ids) of a layout-2 file"
check "--data-mode stream exits 2" expect_rc 2 "$S" train "${recipe[@]}" --data-mode stream --max-steps 2 --out "$work/x"
check "  naming the option" contains "--data-mode stream"
check "  and no run directory was left" test ! -e "$work/x"
finish
