#!/usr/bin/env bash
# A run that diverges stops wasting the allocation. At np 2 on an mlp: a NaN loss injected on
# rank 1 at step 5 skips that step's update on every rank (its checkpoint equals step 4's, byte
# for byte), names the step and the rank, and training goes on to exit 0; cnn-small at --lr 50
# (the mlp stays finite there: its ReLUs die first) sends the loss to NaN, every such step
# updates nothing, and after --max-nonfinite-steps 3 in a row
# the job ends with exit 1 within those 3 steps, naming the first and the last checkpoint, and no
# checkpoint left holds a NaN or an infinity; cnn-bn at --lr 50 keeps a finite loss while its
# BatchNorm running variance turns NaN, and those checkpoints are not written. A bad value exits 2
# naming the option.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/resume_lib.sh"
train_work
MPI=(timeout 120 "$MPIEXEC" -np 2)
common=(--data "$D" --batch-size 16 --threads 1 --log-every 2 --schedule constant --optimizer sgd
  --momentum 0.9 --seed 7 --eval-every 0 --final-split none --resume none)
recipe=("${common[@]}" --model mlp --mlp-widths 32,16)

check "4 steps, the reference" expect_rc 0 "${MPI[@]}" "$S" train "${recipe[@]}" --lr 0.05 \
  --max-steps 4 --out "$work/four"
SLIMTRAIN_INJECT="rank=1,phase=train,step=5,action=nan" check "a NaN loss on rank 1 at step 5 of 5" \
  expect_rc 0 "${MPI[@]}" "$S" train "${recipe[@]}" --lr 0.05 --max-steps 5 --out "$work/five"
check "  named: the step and the rank" contains "step 5: the loss is not finite on rank 1 (.*): its update is skipped on every rank (1 in a row"
check "  one nonfinite event" json_is "[$(events "$work/five" nonfinite | tr '\n' ',' | sed 's/,$//')]" \
  'len(e) == 1 and e[0]["step"] == 5 and e[0]["in_a_row"] == 1'
check "  step 5's weights are step 4's, byte for byte" cmp "$work/four/checkpoints/step-00000004/tensors.bin" \
  "$work/five/checkpoints/step-00000005/tensors.bin"
SLIMTRAIN_INJECT="rank=1,phase=train,step=5,action=nan" check "the same at step 5 of 30" \
  expect_rc 0 "${MPI[@]}" "$S" train "${recipe[@]}" --lr 0.05 --max-steps 30 --out "$work/thirty"
check "  training went on to step 30" json_is "$(events "$work/thirty" done)" 'e["step"] == 30'

check "cnn-small at --lr 50 diverges: exit 1" expect_rc 1 "${MPI[@]}" "$S" train "${common[@]}" \
  --model cnn-small --lr 50 \
  --max-steps 400 --checkpoint-every 4 --keep-last 100 --max-nonfinite-steps 3 --out "$work/diverged"
check "  naming the steps and the option" contains "training diverged: 3 steps in a row ([0-9]* to [0-9]*) had a non-finite loss or gradient norm and updated nothing (--max-nonfinite-steps 3)"
check "  and the last checkpoint to resume" contains "the last checkpoint, whose weights are finite: .*step-[0-9]*; resume it with --resume auto and a lower --lr"
check "  ended within 3 steps of the first" json_is "$(events "$work/diverged" failed)" \
  'e["step"] == e["first_nonfinite_step"] + 2'
check "  every skipped step logged, 3 in a row at the end" json_is \
  "[$(events "$work/diverged" nonfinite | tail -n 3 | tr '\n' ',' | sed 's/,$//')]" \
  '[x["in_a_row"] for x in e] == [1, 2, 3]'
for ckpt in "$work/diverged"/checkpoints/step-*; do
  "$S" export --checkpoint "$ckpt" -o "$work/$(basename "$ckpt").h5" >/dev/null 2>&1 || exit 1
done
check "  no checkpoint holds a NaN or an infinity" "$PY" - "$work" <<'EOF'
import glob, sys, h5py, numpy as np
files = sorted(glob.glob(f"{sys.argv[1]}/step-*.h5"))
assert files, "no checkpoint was exported"
for f in files:
    with h5py.File(f) as h:
        for name in h:
            if isinstance(h[name], h5py.Dataset):
                assert np.isfinite(h[name][()]).all(), (f, name)
print(f"  {len(files)} checkpoints, all finite")
EOF
check "cnn-bn at --lr 50: the loss stays finite, BatchNorm's running variance does not" \
  expect_rc 0 "${MPI[@]}" "$S" train "${common[@]}" --model cnn-bn --lr 50 --max-steps 40 \
  --checkpoint-every 10 --out "$work/bn"
check "  such a checkpoint is not written, naming the tensor" contains "checkpoint at step [0-9]* not written: model/.*running_var holds NaN or infinite values; the latest checkpoint stays .*step-"
check "  and says so in the run log" json_is "$(events "$work/bn" checkpoint_skipped | tail -n 1)" \
  'e["step"] == 40 and "running_var" in e["nonfinite_tensor"]'
check "--max-nonfinite-steps 0 exits 2" expect_rc 2 "$S" train "${recipe[@]}" --max-nonfinite-steps 0 --out "$work/x"
check "  naming the option" contains "--max-nonfinite-steps"
check "  and no run directory was left" test ! -e "$work/x"
finish
