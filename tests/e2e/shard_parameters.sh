#!/usr/bin/env bash
# --shard parameters (ZeRO-3) end to end against --shard gradients on the same seed: a built-in
# mlp (a layer at a time, and with the next gathered ahead) and vit-tiny (layers gathered as they
# run; and again for their recomputation with --activation-checkpointing) bit-identical at np 2
# over 200 and 50 steps, with
# evaluations and checkpoints between steps; within 1e-6 at np 4; a TorchScript model (gathered
# whole for each step) within 1e-6 over 50 steps; resumes across world sizes and shard modes
# (np 2 parameters -> np 4 gradients -> np 3 parameters -> np 1 none, the loss going on; a resume
# from --shard gradients into parameters at np 2 bit-identical to the uninterrupted run); a rank
# that dies ends the job while the others wait in a layer's gather.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/resume_lib.sh"
train_work
np() { timeout 120 "$MPIEXEC" --oversubscribe -np "$@"; }
recipe=(--data "$D" --model mlp --mlp-widths 32,32,16 --threads 1 --log-every 10 --batch-size 8
  --schedule constant --seed 42 --eval-every 0 --final-split none --bucket-mb 0.002 --resume auto
  --optimizer adamw --lr 0.01)
# both_modes WHAT NAME NP TRAIN_ARGS...: WHAT trained at NP ranks with --shard gradients, then
# parameters, into $work/NAME-gradients and $work/NAME-parameters.
both_modes() {
  local what=$1 name=$2 ranks=$3 mode
  shift 3
  for mode in gradients parameters; do
    check "$what --shard $mode" expect_rc 0 np "$ranks" "$S" train "$@" --shard "$mode" \
      --out "$work/$name-$mode"
  done
}

both_modes "np 2, 200 AdamW steps," np2 2 "${recipe[@]}" --max-steps 200
check "  the start line says how the weights travel" contains "--shard parameters (this rank updates [0-9]* of [0-9]* elements; weights gathered as each layer runs: --overlap-gather auto: one layer at a time on CPU"
check "np 2 --shard parameters --overlap-gather on (the next layer gathered while one computes)" \
  expect_rc 0 np 2 "$S" train "${recipe[@]}" --max-steps 200 --shard parameters \
  --overlap-gather on --out "$work/np2-ahead"
check "  bit-identical too" same_weights "$work/np2-gradients" "$work/np2-ahead" 200
check "  the start event records it" json_is "$(events "$work/np2-parameters" start)" 'e["shard"] == "parameters"'
check "  bit-identical to --shard gradients" same_weights "$work/np2-gradients" "$work/np2-parameters" 200
check "  each rank's weights are half of --shard gradients' (the done event's weights_bytes)" \
  json_is "$(events "$work/np2-parameters" done)" \
  'abs(e["memory"]["weights_bytes"] * 2 - '"$(event_field "$work/np2-gradients" done memory | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["weights_bytes"])')"') <= 64'

with_eval=("${recipe[@]}")
for i in "${!with_eval[@]}"; do [ "${with_eval[i]}" = --eval-every ] && with_eval[i+1]=30; done
both_modes "np 2, evaluations and checkpoints between steps, --clip-grad-norm, --grad-accum 2," \
  eval 2 "${with_eval[@]}" --max-steps 120 --checkpoint-every 40 --clip-grad-norm 0.5 --grad-accum 2
# An evaluation's numbers, what --shard parameters adds about its gathers left out (and its bytes:
# it agrees that every rank is ready first, 8 more).
eval_metrics() {
  events "$1" eval | "$PY" -c 'import json, sys
for line in sys.stdin:
    e = json.loads(line)
    print(sorted((k, v) for k, v in e.items()
                 if k not in ("time", "gathered_peak_bytes", "weights_whole_bytes", "bytes_sent")
                 and not k.endswith(("_ms", "_s", "seconds", "per_s"))))'
}
check "  three evaluations each (steps 30, 60, 90)" test "$(eval_metrics "$work/eval-parameters" | wc -l)" = 3 -a "$(eval_metrics "$work/eval-gradients" | wc -l)" = 3
check "  that saw the same weights" test "$(eval_metrics "$work/eval-parameters")" = "$(eval_metrics "$work/eval-gradients")"
check "  the checkpoints at step 80 bit-identical" same_weights "$work/eval-gradients" "$work/eval-parameters" 80

both_modes "np 4, 100 steps," np4 4 "${recipe[@]}" --max-steps 100
check "  within 1e-6" within "$work/np4-gradients" "$work/np4-parameters" 100 1e-6

vit=(--data "$D" --model vit-tiny --vit-patch 4 --threads 1 --log-every 10 --batch-size 8 --schedule constant
  --seed 5 --eval-every 25 --checkpoint-every 25 --final-split test --resume auto --optimizer adamw
  --lr 0.001)
both_modes "vit-tiny np 2, 50 steps," vit 2 "${vit[@]}" --max-steps 50
check "  bit-identical" same_weights "$work/vit-gradients" "$work/vit-parameters" 50
check "  the final evaluation after the last checkpoint (which frees the weights) the same" test \
  "$(eval_metrics "$work/vit-parameters")$(event_field "$work/vit-parameters" done final)" = \
  "$(eval_metrics "$work/vit-gradients")$(event_field "$work/vit-gradients" done final)"
# Each block recomputed in backward (--activation-checkpointing layers) is gathered for it: its
# own bucket or several (--bucket-mb), freed after, as without recomputing.
both_modes "vit-tiny np 2, 30 steps, --activation-checkpointing layers," vitac 2 "${vit[@]}" \
  --max-steps 30 --activation-checkpointing layers --bucket-mb 0.01
check "  bit-identical" same_weights "$work/vitac-gradients" "$work/vitac-parameters" 25

if "$PY" -c "import torch" 2>/dev/null; then
  mkdir -p "$work/ts" && "$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/torchscript_models.py" "$work/ts" 1 8 8 4 || exit 1
  script=(--data "$D" --model "torchscript:$work/ts/plain.pt" --threads 1 --log-every 10
    --batch-size 8 --schedule constant --seed 5 --eval-every 0 --final-split none --resume auto
    --optimizer adamw --lr 0.01)
  both_modes "TorchScript np 2, 50 steps," ts 2 "${script[@]}" --max-steps 50
  check "  it says its weights are gathered whole" contains "does not gate its layers, so its weights are gathered whole before each forward"
  check "  within 1e-6" within "$work/ts-gradients" "$work/ts-parameters" 50 1e-6
else
  echo "  (TorchScript cases left out: /usr/bin/python3 lacks torch)"
fi

# Resuming across world sizes and modes.
chain=("${recipe[@]}" --out "$work/chain" --checkpoint-every 50)
check "chain: np 2 --shard parameters, to step 50" expect_rc 0 np 2 "$S" train "${chain[@]}" \
  --max-steps 50 --shard parameters
check "chain: np 4 --shard gradients, to step 100" expect_rc 0 np 4 "$S" train "${chain[@]}" \
  --max-steps 100 --shard gradients
check "  resumed from a 2-rank checkpoint" contains "resuming a 2-rank checkpoint on 4 ranks"
check "chain: np 3 --shard parameters, to step 150" expect_rc 0 np 3 "$S" train "${chain[@]}" \
  --max-steps 150 --shard parameters
check "  resumed from step 100" contains "resumed from .*step-00000100 at step 100"
check "chain: np 1 --shard none, to step 200" expect_rc 0 "$S" train "${chain[@]}" --max-steps 200
check "  the loss goes on across every resume" losses_hold "$work/chain" '
assert max(loss) == 200, max(loss)
# Each part starts where the last ended (a restart from scratch would be back near step 10s).
for at in (50, 100, 150):
    assert loss[at + 10] < 0.5 * loss[10], (at, loss[10], loss[at + 10])
assert loss[200] < 0.5 * loss[10], (loss[10], loss[200])'
check "np 2 --shard gradients to step 100" expect_rc 0 np 2 "$S" train "${recipe[@]}" \
  --max-steps 100 --checkpoint-every 50 --shard gradients --out "$work/switch"
mkdir -p "$work/uninterrupted/checkpoints"
mv "$work/switch/checkpoints/step-00000100" "$work/uninterrupted/checkpoints/"
check "  resumed at step 50 with --shard parameters, to step 100" expect_rc 0 np 2 "$S" train \
  "${recipe[@]}" --max-steps 100 --checkpoint-every 50 --shard parameters --out "$work/switch"
check "  from step 50" contains "resumed from .*step-00000050 at step 50"
check "  bit-identical to the uninterrupted run" same_weights "$work/uninterrupted" "$work/switch" 100

# A rank that dies: the other waits in a layer's gather until mpirun ends the job. The run to
# step 4 ends first, so that a whole checkpoint exists however fast the steps after it run (a
# step takes a millisecond: a busy machine's write of step 4 could still be under way at step 8).
R=$work/exit
check "a run to step 4, checkpointed" expect_rc 0 np 2 "$S" train "${recipe[@]}" --max-steps 4 \
  --checkpoint-every 4 --shard parameters --out "$R"
timed env SLIMTRAIN_INJECT="rank=1,phase=train,step=8,action=exit" timeout 120 "$MPIEXEC" \
  --oversubscribe -np 2 "$S" train "${recipe[@]}" \
  --max-steps 20 --checkpoint-every 4 --collective-timeout 60 --shard parameters --out "$R"
echo "  (dead rank: exit $rc after $wall s)"
check "dead rank: job exits non-zero" test "$rc" -ne 0 -a "$rc" -ne 124
check "  promptly (well before the 60 s deadline)" test "$wall" -le 30
check "  the injection fired" contains "r1 WARN  fault injection .*phase=train step=8 action=exit"
check "  the checkpoint of step 4 resumes" expect_rc 0 np 2 "$S" train "${recipe[@]}" --max-steps 12 \
  --checkpoint-every 4 --shard parameters --out "$R"
check "  from step 4 or later" contains "resumed from .*step-0000000[48] at step [48]"
finish
