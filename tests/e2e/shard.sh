#!/usr/bin/env bash
# --shard optimizer|gradients (ZeRO-1, 2) end to end: at np 2 the weights after 200 steps are
# bit-identical to --shard none's (with --grad-compression bf16 too), at np 4 within 1e-6;
# checkpoints reshard on resume (np 4
# gradients -> np 2 optimizer -> np 3 none -> np 1, the loss going on; a resharded resume at np 2
# bit-identical to the uninterrupted run); kill -9 while the ranks write a sharded checkpoint
# resumes from the one before; inspect shows which file holds which elements; export and eval
# read sharded checkpoints; bad values exit 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/resume_lib.sh"
job=
train_work '[ -n "$job" ] && kill_job'
np() { timeout 120 "$MPIEXEC" --oversubscribe -np "$@"; }
recipe=(--data "$D" --model mlp --mlp-widths 32,16 --threads 1 --log-every 10 --batch-size 8
  --schedule constant --seed 42 --eval-every 0 --final-split none --bucket-mb 0.002 --resume auto)
adamw=(--optimizer adamw --lr 0.01)
sgd=(--optimizer sgd --lr 0.01 --momentum 0.9 --nesterov true --weight-decay 1e-4)

for mode in none optimizer gradients; do
  check "np 2 --shard $mode, 200 AdamW steps" expect_rc 0 np 2 "$S" train "${recipe[@]}" "${adamw[@]}" \
    --max-steps 200 --shard "$mode" --out "$work/np2-$mode"
done
check "  the start line says what this rank updates" contains "--shard gradients (this rank updates 1338 of 2676 elements; weights gathered after the step: --overlap-gather auto: off on CPU"
check "  and that buckets are reduce-scattered during backward" contains "overlap on; --overlap auto: --shard gradients"
check "  the start event records it" json_is "$(events "$work/np2-gradients" start)" 'e["shard"] == "gradients"'
check "  --shard optimizer bit-identical to none" same_weights "$work/np2-none" "$work/np2-optimizer" 200
check "  --shard gradients bit-identical to none" same_weights "$work/np2-none" "$work/np2-gradients" 200
check "  each rank's optimizer state is half of none's" json_is "$(events "$work/np2-gradients" done)" \
  'e["memory"]["optimizer_bytes"] * 2 == '"$(event_field "$work/np2-none" done memory | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["optimizer_bytes"])')"
# --overlap-gather on: each layer waits for its own weights in the next forward; evaluations and
# checkpoints wait for all of them. The same weights, bit for bit.
with_eval=("${recipe[@]}")
for i in "${!with_eval[@]}"; do [ "${with_eval[i]}" = --eval-every ] && with_eval[i+1]=30; done
check "np 2 --shard gradients --overlap-gather on, evaluations and checkpoints between steps" \
  expect_rc 0 np 2 "$S" train "${with_eval[@]}" "${adamw[@]}" --max-steps 200 --shard gradients \
  --overlap-gather on --checkpoint-every 40 --out "$work/np2-gather"
check "  the start line says the weights travel during forward" \
  contains "weights gathered during the next forward: --overlap-gather on"
check "  bit-identical to --shard none" same_weights "$work/np2-none" "$work/np2-gather" 200
check "  the same run with --overlap-gather off" expect_rc 0 np 2 "$S" train "${with_eval[@]}" \
  "${adamw[@]}" --max-steps 200 --shard gradients --overlap-gather off --checkpoint-every 40 \
  --out "$work/np2-gather-off"
# eval_metrics RUN: each eval event without its timings.
eval_metrics() {
  events "$1" eval | "$PY" -c 'import json, sys
for line in sys.stdin:
    e = json.loads(line)
    print(sorted((k, v) for k, v in e.items()
                 if k != "time" and not k.endswith(("_ms", "_s", "seconds", "per_s"))))'
}
check "  six evaluations ran with gathers in flight" test "$(eval_metrics "$work/np2-gather" | wc -l)" = 6
check "  evaluations saw the same weights (every eval event's metrics equal)" test \
  "$(eval_metrics "$work/np2-gather")" = "$(eval_metrics "$work/np2-gather-off")"
check "  and the checkpoint at step 120" same_weights "$work/np2-gather-off" "$work/np2-gather" 120
check "--clip-grad-norm from the shards, SGD with Nesterov momentum" expect_rc 0 np 2 "$S" train \
  "${recipe[@]}" "${sgd[@]}" --max-steps 100 --clip-grad-norm 0.05 --shard gradients --out "$work/clip-gradients"
check "  and unsharded" expect_rc 0 np 2 "$S" train "${recipe[@]}" "${sgd[@]}" --max-steps 100 \
  --clip-grad-norm 0.05 --out "$work/clip-none"
check "  within 1e-6 (the norm sums in another order)" within "$work/clip-none" "$work/clip-gradients" 100 1e-6

# bf16 on the wire: the reduce-scatter sums two bf16 values and rounds once, as the all-reduce does.
for mode in none gradients; do
  check "np 2 --shard $mode --grad-compression bf16, 100 steps" expect_rc 0 np 2 "$S" train \
    "${recipe[@]}" "${adamw[@]}" --max-steps 100 --grad-compression bf16 --shard "$mode" \
    --out "$work/bf16-$mode"
done
check "  --shard gradients bit-identical to none under bf16 compression" same_weights \
  "$work/bf16-none" "$work/bf16-gradients" 100

for mode in none optimizer gradients; do
  check "np 4 --shard $mode, 200 steps" expect_rc 0 np 4 "$S" train "${recipe[@]}" "${adamw[@]}" \
    --max-steps 200 --shard "$mode" --out "$work/np4-$mode"
done
check "  --shard optimizer within 1e-6 of none" within "$work/np4-none" "$work/np4-optimizer" 200 1e-6
check "  --shard gradients within 1e-6 of none" within "$work/np4-none" "$work/np4-gradients" 200 1e-6

# Resharding on resume, exactly: a checkpoint of --shard gradients resumed with --shard none at
# the same world size continues as the uninterrupted run does.
check "np 2 --shard gradients to step 100, checkpoints every 50" expect_rc 0 np 2 "$S" train \
  "${recipe[@]}" "${adamw[@]}" --max-steps 100 --checkpoint-every 50 --shard gradients --out "$work/whole"
check "  the same run stopped at step 50" expect_rc 0 np 2 "$S" train "${recipe[@]}" "${adamw[@]}" --max-steps 50 \
  --checkpoint-every 50 --shard gradients --out "$work/half"
check "  resumed with --shard none to step 100" expect_rc 0 np 2 "$S" train "${recipe[@]}" "${adamw[@]}" \
  --max-steps 100 --checkpoint-every 50 --shard none --out "$work/half"
check "  from step 50" contains "resumed from .*step-00000050 at step 50"
check "  bit-identical to the uninterrupted run" same_weights "$work/whole" "$work/half" 100
check "  --optimizer sgd on that AdamW state exits 2" expect_rc 2 np 2 "$S" train "${recipe[@]}" "${sgd[@]}" \
  --max-steps 150 --out "$work/half"
check "  naming both optimizers" contains "optimizer state is adamw's; this run's --optimizer is sgd"

# The chain: np 4 gradients -> np 2 optimizer -> np 3 none -> np 1, checkpoints every 25 steps.
# A small learning rate keeps the loss far from zero over the 200 steps, so a jump would show.
chain=("${recipe[@]}" --optimizer adamw --lr 0.0005 --checkpoint-every 25 --out "$work/chain")
check "chain: np 4 --shard gradients, steps 1-50" expect_rc 0 np 4 "$S" train "${chain[@]}" \
  --max-steps 50 --shard gradients
check "  four optimizer files in the checkpoint" test "$(ls "$work/chain/checkpoints/step-00000050" | grep -c '^optimizer-rank-')" = 4
check "  inspect shows which file holds which elements" expect_rc 0 "$S" inspect "$work/chain"
check "  | the layout" contains "adamw state by element: 2676 elements in 4 files, written at 4 rank(s) with --shard gradients"
check "  | a file" contains "optimizer-rank-00003.bin: 669 elements in"
check "  export reads it" expect_rc 0 "$S" export --checkpoint "$work/chain" -o "$work/chain.h5"
check "  eval reads it" expect_rc 0 "$S" eval --checkpoint "$work/chain" --data "$D" --split test
check "chain: np 2 --shard optimizer, to step 100" expect_rc 0 np 2 "$S" train "${chain[@]}" \
  --max-steps 100 --shard optimizer
check "  resumed from step 50, a 4-rank checkpoint" contains "resuming a 4-rank checkpoint on 2 ranks"
check "chain: np 3 --shard none, to step 150" expect_rc 0 np 3 "$S" train "${chain[@]}" \
  --max-steps 150 --shard none
check "  resumed from step 100" contains "resumed from .*step-00000100 at step 100"
check "chain: np 1, to step 200" expect_rc 0 "$S" train "${chain[@]}" --max-steps 200
check "  resumed from step 150" contains "resumed from .*step-00000150 at step 150"
check "  the loss goes on across every resume" losses_hold "$work/chain" '
steps = sorted(loss)
assert steps[-1] == 200, steps
# A lost optimizer state (AdamW restarting its moments) jumps the loss after the resume; a kept
# one continues from where it was.
for at in (50, 100, 150):
    assert loss[at + 10] < 1.5 * loss[at] + 0.05, (at, loss[at], loss[at + 10])
assert loss[200] < 0.6 * loss[10], (loss[10], loss[200])'

# kill -9 while the ranks write their shards of step 50 (rank 0's writer stalled): the resume
# takes step 25's checkpoint, and the stale shards go.
SLIMTRAIN_INJECT="rank=0,phase=checkpoint,step=50,action=hang" start_job "$work/kill.log" \
  --oversubscribe -np 4 "$S" train "${recipe[@]}" "${adamw[@]}" --max-steps 100 --checkpoint-every 25 \
  --shard gradients --out "$work/killed"
wait_until 60 grep -qs "fault injection" "$work/kill.log" &&
  wait_until 30 test -e "$work/killed/checkpoints/.shards-step-00000050/optimizer-rank-00003.bin"
reached=$?
kill_job
job=
check "kill -9 while the step-50 shards are being written" test "$reached" -eq 0
check "  step 25 is still the latest" latest_is "$work/killed" 25
check "  resumed at np 4" expect_rc 0 np 4 "$S" train "${recipe[@]}" "${adamw[@]}" --max-steps 100 \
  --checkpoint-every 25 --shard gradients --out "$work/killed"
check "  from step 25" contains "resumed from .*step-00000025 at step 25"
check "  no staging directory is left" test -z "$(ls -A "$work/killed/checkpoints" | grep shards)"
check "  step 100 written" latest_is "$work/killed" 100

check "--shard zero3 exits 2" expect_rc 2 "$S" train "${recipe[@]}" "${adamw[@]}" --max-steps 1 --shard zero3 --out "$work/x"
check "  naming the option" contains "--shard"
check "  and no run directory was left" test ! -e "$work/x"
finish
