#!/usr/bin/env bash
# --grad-accum N: N micro-batches per optimizer step, reduced once. At np 2 on an mlp (no
# BatchNorm): --batch-size 16 --grad-accum 4 ends 100 optimizer steps within 1e-5 of
# --batch-size 64 (the same samples per step; only the order of the float sums differs), with
# --overlap on bit-identical to off (the bucket hook adds the earlier micro-batches' sum itself),
# and --shard gradients with weights made in pieces bit-identical to none;
# kill -9 mid-run and --resume auto continue bit-identically; an epoch's batches past its last whole
# group are skipped; bad values exit 2 naming the option.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/train_lib.sh"
. "$(dirname "$0")/resume_lib.sh"
job=
train_work '[ -n "$job" ] && kill_job'
MPI=(timeout 120 "$MPIEXEC" -np 2)
recipe=(--data "$D" --model mlp --mlp-widths 32,16 --threads 1 --log-every 10
  --schedule constant --optimizer sgd --lr 0.05 --momentum 0.9 --seed 42 --eval-every 0
  --final-split none --resume auto)

check "--batch-size 64 at np 2, 100 steps" expect_rc 0 "${MPI[@]}" "$S" train "${recipe[@]}" --max-steps 100 \
  --batch-size 64 --out "$work/big"
check "--batch-size 16 --grad-accum 4, 100 optimizer steps" expect_rc 0 "${MPI[@]}" "$S" train \
  "${recipe[@]}" --max-steps 100 --batch-size 16 --grad-accum 4 --out "$work/accum"
check "  the start line says so" contains "2 ranks x batch 16 x 4 accumulated, 3 steps/epoch"
check "  100 optimizer steps, 64 samples per rank each" json_is "$(events "$work/accum" done)" \
  'e["step"] == 100'
check "  the start event records it" json_is "$(events "$work/accum" start)" \
  'e["grad_accum"] == 4 and e["total_steps"] == 100'
for run in big accum; do
  "$S" export --checkpoint "$work/$run" -o "$work/$run.h5" >/dev/null 2>&1
done
check "  weights within 1e-5 of --batch-size 64" "$PY" - "$work/big.h5" "$work/accum.h5" <<'EOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1]) as a, h5py.File(sys.argv[2]) as b:
    names = sorted(n for n in a if isinstance(a[n], h5py.Dataset))
    assert names and names == sorted(n for n in b if isinstance(b[n], h5py.Dataset)), names
    worst = max(float(np.abs(a[n][()] - b[n][()]).max() / max(np.abs(a[n][()]).max(), 1e-12))
                for n in names)
print(f"  largest relative difference over {len(names)} tensors: {worst:.2e}")
sys.exit(0 if worst < 1e-5 else 1)
EOF
check "the same with --overlap on (gradients summed in the bucket hook)" expect_rc 0 "${MPI[@]}" \
  "$S" train "${recipe[@]}" --max-steps 100 --batch-size 16 --grad-accum 4 --overlap on --out "$work/hook"
check "  bit-identical to overlap off" same_weights "$work/accum" "$work/hook" 100
# Buckets of one weight each: its last micro-batch's gradient is made in pieces reduce-scattered as
# they are made, the earlier micro-batches' sum added to each piece (train/grad_pieces.cpp).
check "--shard gradients with --grad-accum 4, weights in pieces" expect_rc 0 "${MPI[@]}" "$S" train \
  "${recipe[@]}" --max-steps 100 --batch-size 16 --grad-accum 4 --shard gradients --bucket-mb 0.002 \
  --out "$work/pieces"
check "  bit-identical to --shard none" same_weights "$work/accum" "$work/pieces" 100

# kill -9 of every rank after the step-40 checkpoint, then --resume auto.
SLIMTRAIN_INJECT="rank=1,phase=train,step=45,action=hang" start_job "$work/kill.log" -np 2 "$S" \
  train "${recipe[@]}" --max-steps 100 --batch-size 16 --grad-accum 4 --checkpoint-every 20 --out "$work/resumed"
wait_until 60 grep -qs "fault injection" "$work/kill.log" && wait_until 30 latest_is "$work/resumed" 40
reached=$?
kill_job
job=
check "kill -9 mid-run after the step-40 checkpoint" test "$reached" -eq 0
check "  resumed with --resume auto" expect_rc 0 "${MPI[@]}" "$S" train "${recipe[@]}" --max-steps 100 \
  --batch-size 16 --grad-accum 4 --checkpoint-every 20 --out "$work/resumed"
check "  from step 40" contains "resumed from .*step-00000040 at step 40"
check "  final weights bit-identical to the uninterrupted run" same_weights "$work/accum" "$work/resumed" 100

check "--grad-accum 5: 12 batches an epoch make 2 steps, 2 batches skipped" expect_rc 0 "${MPI[@]}" \
  "$S" train "${recipe[@]}" --batch-size 16 --grad-accum 5 --max-steps 6 --out "$work/five"
check "  2 steps/epoch" contains "x 5 accumulated, 2 steps/epoch"
check "  6 steps in 3 epochs" json_is "$(events "$work/five" done)" 'e["step"] == 6'
check "--grad-accum 25 at np 1 (more than an epoch's 24 batches) exits 2" expect_rc 2 "$S" train \
  "${recipe[@]}" --max-steps 100 --batch-size 16 --grad-accum 25 --out "$work/x"
check "  naming the option and the epoch" contains "--grad-accum 25: an epoch has 24 batches of 16 per rank"
check "--grad-accum 0 exits 2" expect_rc 2 "$S" train "${recipe[@]}" --max-steps 100 --grad-accum 0 --out "$work/x"
check "  naming the option" contains "--grad-accum"
check "  and no run directory was left" test ! -e "$work/x"
finish
