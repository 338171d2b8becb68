#!/usr/bin/env bash
# slimtrain train and eval as a user runs them: every bad option or input exits 2 naming it and
# leaves no run directory behind; `slimtrain eval` of the final checkpoint, at 1, 2 and 3 ranks,
# reports what the trainer's final test evaluation reported.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
train_work
runs=$work/runs
mkdir -p "$runs"

n=0
bad() {  # bad "expected text" train-args...: exit 2, the text in the output, no run dir left
  local text=$1; shift
  n=$((n + 1))
  check "train $* exits 2" expect_rc 2 "$S" train "$@" --out "$runs/bad-$n"
  check "  names it: $text" contains "$text"
  check "  leaves no run directory" test ! -e "$runs/bad-$n"
}
bad "unrecognised option '--bogus'" --data "$D" --bogus 1
bad "--batch-size: 0 is outside" --data "$D" --batch-size 0
bad "--model: 'nope' is not one of mlp, cnn-small, cnn-bn, vit-tiny" --data "$D" --model nope
bad "--lr: -1 is outside" --data "$D" --lr -1
bad "--mlp-widths: '32,x'" --data "$D" --model mlp --mlp-widths 32,x
bad "option '--data' is required" --model mlp
bad "$work/nope.h5: no such file" --data "$work/nope.h5"
bad "--eval-split: .* has no split 'val'" --data "$D" --eval-split val
bad "--grad-compression: 'fp8' is not one of none, bf16" --data "$D" --grad-compression fp8
bad "--cnn-layers: 9 is outside" --data "$D" --model cnn-bn --cnn-layers 9
bad "--memory-per-rank: -1 is outside" --data "$D" --memory-per-rank -1
bad "--activation-checkpointing layers: --model mlp has no transformer layers to recompute" --data "$D" --model mlp --activation-checkpointing layers
bad "the memory plan needs .* GB per rank with --shard none (weights 0.00, .*), more than rank 0's 0.00 GB (--memory-per-rank)" --data "$D" --memory-per-rank 0.000001
printf 'batch-size = 0\n' >"$work/bad.ini"
bad "--batch-size: 0 is outside" --config "$work/bad.ini" --data "$D"
printf 'bogus-key = 3\n' >"$work/bad2.ini"
bad "bad2.ini: unrecognised option 'bogus-key'" --config "$work/bad2.ini" --data "$D"
bad "--config: cannot open" --config "$work/nope.ini" --data "$D"
check "a bad SLIMTRAIN_INJECT exits 2" expect_rc 2 env SLIMTRAIN_INJECT="rank=1,phase=eval" "$S" train --data "$D" --out "$runs/inject"
check "  naming the variable" contains "SLIMTRAIN_INJECT=.* needs rank=, phase= and step="
check "  leaves no run directory" test ! -e "$runs/inject"
check "a missing data file under mpirun -np 2 exits 2" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" train --data "$work/nope.h5" --out "$runs/mpi"
check "  naming the file" contains "nope.h5: no such file"
check "  leaves no run directory" test ! -e "$runs/mpi"
mkdir -p "$runs/kept" && echo note >"$runs/kept/mine.txt"
check "a bad option with an existing run directory exits 2" expect_rc 2 "$S" train --data "$D" --lr -1 --out "$runs/kept"
check "  and leaves that directory as it was" test "$(ls -A "$runs/kept")" = mine.txt

# The final checkpoint and the trainer's final test evaluation (2 ranks, 203 test samples).
R=$runs/good
check "training at np 2" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" train --data "$D" --out "$R" "${SMALL_JOB[@]}" --max-steps 20 --bucket-mb 0.004
check "  with gradients in several buckets" contains "gradient buckets: [2-9] (overlap o[nf]*; --overlap auto: "
check "  pieces chosen by timing both sizes" contains "pieces of at most \\(1024\\|4096\\) KiB (measured: an 8 MiB all-reduce took [0-9.]* ms in 4 MiB pieces, [0-9.]* ms in 1 MiB ones)"
check "  and recorded" json_is "$(events "$R" start)" 'e["chunk_bytes"] in (1 << 20, 4 << 20)'
check "  the memory plan in the start lines" contains "memory plan: [0-9.]* GB per rank with --shard none (weights .*), counted from the model as built; budget [0-9.]* GB (rank [01]: its host's available memory"
check "  and in the start record, within the budget" json_is "$(events "$R" start)" '0 < e["memory_plan"]["total_bytes"] <= e["memory_plan"]["budget_bytes"]'
check "  the measured peak beside it" contains "memory on rank 0: peak [0-9.]* GB resident in training, planned [0-9.]* GB"
check "  and in the done event" json_is "$(events "$R" done)" 'e["memory"]["planned_bytes"] > 0 and e["memory"]["peak_resident_bytes"] > 0'
check "the plan refused under mpirun -np 2 exits 2" expect_rc 2 timeout 60 "$MPIEXEC" -np 2 "$S" train --data "$D" --out "$runs/plan" --memory-per-rank 0.01
check "  naming the numbers and the floor" contains "no --shard mode fits: with --shard gradients every rank still holds every weight"
check "  leaves no run directory" test ! -e "$runs/plan"
[ "$fails" -eq 0 ] || { finish; exit 1; }
final=$(events "$R" done | "$PY" -c 'import json, sys; print(json.dumps(json.loads(sys.stdin.read())["test"]))')
echo "  final test evaluation: ${final:0:120}"
check "  done event with test metrics" json_is "$final" 'e["count"] == 203'
check "  a model that is neither perfect nor useless (the comparison means something)" json_is "$final" '0.3 < e["accuracy"] < 1.0'
# The same run with bf16 gradient compression: half the bytes, the same model within noise.
check "training at np 2 with --grad-compression bf16" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" train --data "$D" --out "$runs/bf16" "${SMALL_JOB[@]}" --max-steps 20 --bucket-mb 0.004 --grad-compression bf16 --chunk-mb 2
check "  says what travels" contains "gradient buckets: [2-9] (.*), 5 KiB per step as bf16"
check "  records it" json_is "$(events "$runs/bf16" start)" 'e["grad_compression"] == "bf16" and e["chunk_bytes"] == 2 << 20'
check "  --chunk-mb is taken as given" contains "pieces of at most 2048 KiB (--chunk-mb)"
check "  reaches the fp32 run's accuracy (within 0.05)" json_is "$(events "$runs/bf16" done)" "abs(e['test']['accuracy'] - $(field "$R" done 'e["test"]["accuracy"]')) <= 0.05"
STEP=$R/checkpoints/step-00000020
same_metrics() {  # same_metrics JSON: accuracy, macro-F1, count and per-class support equal
  "$PY" - "$final" "$1" <<'EOF' || { echo "  | trainer: ${final:0:200}"; echo "  | eval:    ${1:0:200}"; return 1; }
import json, sys
t, e = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert e["count"] == t["count"], "count"
assert e["accuracy"] == t["accuracy"], "accuracy"
assert e["macro_f1"] == t["macro_f1"], "macro_f1"
assert [c["support"] for c in e["per_class"]] == [c["support"] for c in t["per_class"]], "support"
assert [c["recall"] for c in e["per_class"]] == [c["recall"] for c in t["per_class"]], "recall"
assert abs(e["loss"] - t["loss"]) <= 1e-6 * max(1.0, abs(t["loss"])), "loss"
EOF
}
# --resume with a run directory continues from its newest checkpoint (step 20).
check "--resume RUN_DIR continues from its newest checkpoint" expect_rc 0 timeout 60 "$MPIEXEC" -np 2 "$S" train --data "$D" --out "$runs/continued" "${SMALL_JOB[@]}" --resume "$R" --max-steps 22
check "  at step 20" json_is "$(events "$runs/continued" start)" 'e["resumed_at_step"] == 20'
check "  to step 22" json_is "$(events "$runs/continued" done)" 'e["step"] == 22'
check "--resume of a directory without checkpoints exits 2" expect_rc 2 "$S" train --data "$D" --out "$runs/never" "${SMALL_JOB[@]}" --resume "$runs/kept"
check "  naming --resume" contains "--resume $runs/kept: not a checkpoint"
check "  leaves no run directory" test ! -e "$runs/never"

check "eval --json at np 2 of the step directory" expect_rc 0 timeout 60 "$MPIEXEC" -np 2 "$S" eval --data "$D" --checkpoint "$STEP" --json --threads 1
check "  equals the trainer's final test evaluation" same_metrics "$(json_line)"
check "  at step 20" json_is "$(json_line)" 'e["step"] == 20 and e["split"] == "test"'
check "eval --json at np 1 of checkpoints/latest" expect_rc 0 "$S" eval --data "$D" --checkpoint "$R/checkpoints/latest" --json --threads 1
check "  equals it too" same_metrics "$(json_line)"
check "eval --json at np 3 of the run directory" expect_rc 0 timeout 60 "$MPIEXEC" -np 3 "$S" eval --data "$D" --checkpoint "$R" --json --threads 1
check "  equals it too" same_metrics "$(json_line)"
check "eval as a table at np 2" expect_rc 0 timeout 60 "$MPIEXEC" -np 2 "$S" eval --data "$D" --checkpoint "$STEP" --threads 1
check "  reports 203 samples on 2 ranks" contains "split 'test', 203 samples on 2 ranks"
check "  and a row per class" contains "^d  *[0-9.]* *[0-9.]* *[0-9.]* *[0-9]*$"
# A run still writing checkpoints: rank 0 resolves RUN_DIR once and every rank evaluates that one.
# Rank 1 is held 8 s before it would resolve anything; meanwhile a newer checkpoint appears.
G=$runs/growing
cp -r "$R" "$G"
SLIMTRAIN_INJECT="rank=1,phase=eval,step=0,delay=8s" timeout 60 "$MPIEXEC" -np 2 "$S" eval \
  --data "$D" --checkpoint "$G" --json --threads 1 >"$runs/growing.log" 2>&1 &
eval_job=$!
resolved() { grep -qs "r0 INFO  rank 0 resolved --checkpoint" "$runs/growing.log"; }
for _ in $(seq 200); do resolved && break; sleep 0.1; done
check "eval of a run directory at np 2: rank 0 resolved it" resolved
cp -r "$runs/continued/checkpoints/step-00000022" "$G/checkpoints/"  # newer, valid
wait "$eval_job"
check "  the evaluation finished" test $? -eq 0
out=$(cat "$runs/growing.log")
check "  rank 0 evaluated step 20" contains "r0 INFO  evaluating checkpoint $G/checkpoints/step-00000020 (step 20)"
check "  rank 1 the same one, not the step-22 checkpoint that appeared" \
  contains "r1 INFO  evaluating checkpoint $G/checkpoints/step-00000020 (step 20)"
check "  the newer checkpoint verifies (resolving by itself, rank 1 would have taken it)" \
  expect_rc 0 "$S" inspect --json "$G/checkpoints/step-00000022"
check "  and is step 22" json_is "$out" 'e["step"] == 22 and e["verified"]'

# cnn-bn: BatchNorm statistics are buffers (rank 0's, broadcast before the final checkpoint and
# evaluation), and evaluation runs in eval mode: eval of its checkpoint equals the trainer's (and
# rebuilds the sixth layer from the checkpoint's model spec).
B=$runs/bn
check "cnn-bn at np 2" expect_rc 0 timeout 120 "$MPIEXEC" -np 2 "$S" train --data "$D" --out "$B" --model cnn-bn --cnn-width 4 --cnn-layers 6 --batch-size 16 --threads 1 --max-steps 30 --augment-flip
check "  described with its width and layers" contains "cnn-bn input \\[1,8,8\\] classes 4 width 4 layers 6"
final=$(events "$B" done | "$PY" -c 'import json, sys; print(json.dumps(json.loads(sys.stdin.read())["test"]))')
check "  learns something" json_is "$final" '0.3 < e["accuracy"] <= 1.0'
check "  eval --json at np 2 of its checkpoint equals the trainer's final evaluation" expect_rc 0 timeout 60 "$MPIEXEC" -np 2 "$S" eval --data "$D" --checkpoint "$B" --json --threads 1
check "  (metrics)" same_metrics "$(json_line)"

check "eval of a missing checkpoint exits 2" expect_rc 2 "$S" eval --data "$D" --checkpoint "$R/checkpoints/step-00000099"
check "  naming it" contains "step-00000099"
check "eval of a missing split exits 2" expect_rc 2 "$S" eval --data "$D" --checkpoint "$STEP" --split val
check "  naming --split" contains "--split: .* has no split 'val'"
check "eval --batch-size 0 exits 2" expect_rc 2 "$S" eval --data "$D" --checkpoint "$STEP" --batch-size 0
check "  naming it" contains "--batch-size: 0 is outside"
finish
