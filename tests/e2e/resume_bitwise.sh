#!/usr/bin/env bash
# Resume continues the same trajectory: N steps in one run against a run whose ranks are all
# killed with -9 mid-way and then resumed to N give bit-identical parameters, for cnn-small/SGD
# momentum (memory reader, evaluations in between) and mlp/AdamW (stream reader, clipping, label
# smoothing, step schedule, augmentation), and cnn-small with augmentation resumed mid-epoch
# (whose evaluation is not augmented). A rank dying inside a background checkpoint write leaves the
# previous checkpoint to resume from, still bit-identical. A corrupt newest checkpoint is skipped
# with a warning naming it and the previous one is used (still bit-identical); a checkpoint of
# another model exits 2 explaining the mismatch; a different number of ranks resumes with a
# warning.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resume_lib.sh"
resume_work
S=$SLIMTRAIN_BIN
train() { "$MPIEXEC" -np 2 "$S" train --data data.h5 --threads 1 "$@"; }

flip_byte() {  # flip_byte FILE OFFSET
  local b
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "\\$(printf %03o $((255 - b)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

cnn=(--batch-size 16 --epochs 3 --optimizer sgd --lr 0.02 --momentum 0.9
     --weight-decay 0.0005 --warmup-steps 5 --schedule cosine --eval-every 6 --log-every 4
     --checkpoint-every 8 --keep-last 3 --data-mode memory)
check "cnn: uninterrupted run of 48 steps" expect_rc 0 train --model cnn-small "${cnn[@]}" --out A --resume none
check "cnn: killed run (-9 on every rank at step 21)" killed_run B 21 16 --model cnn-small "${cnn[@]}"
check "  died before finishing" test ! -e B/checkpoints/step-00000048
cp -a B C
cp -a B H
check "cnn: resume auto to 48" expect_rc 0 train --model cnn-small "${cnn[@]}" --out B --resume auto
check "  from the newest checkpoint, step 16 (an epoch end)" contains "resumed from .*step-00000016 at step 16"
check "  final parameters bit-identical to the uninterrupted run" same_weights A B 48
check "  same final test metrics" test "$(event_field A done test)" = "$(event_field B done test)"
check "  the checkpoint carries the RNG state" expect_rc 0 "$S" inspect B/checkpoints/latest
check "    (blob rng)" contains "blob  *rng"
check "  the start event times the resume" test "$(event_field B start resume_ms)" != null

check "cnn: rank 0 dies inside the background write of checkpoint 24" expect_rc 86 env \
  SLIMTRAIN_CKPT_CRASH_AT=mid-tensors "$MPIEXEC" -np 2 "$S" train --data data.h5 --threads 1 \
  --model cnn-small "${cnn[@]}" --out H --resume auto
check "  leaving a partial temporary directory" sh -c "ls -a H/checkpoints | grep -q '^\.tmp-step-00000024'"
check "  resume auto ignores it and takes step 16" expect_rc 0 train --model cnn-small "${cnn[@]}" --out H --resume auto
check "    (named in the log)" contains "resumed from .*step-00000016 at step 16"
check "  final parameters bit-identical" same_weights A H 48

flip_byte C/checkpoints/step-00000016/tensors.bin 300
cp -a C C0
# Negative control: the comparison tells trajectories apart (a resume with another --lr differs).
cp -a C0 G
check "control: a resume with another --lr" expect_rc 0 train --model cnn-small "${cnn[@]/#0.02/0.021}" --out G --resume auto
check "  ends with different parameters" sh -c "! cmp -s A/checkpoints/step-00000048/tensors.bin G/checkpoints/step-00000048/tensors.bin"
check "cnn: corrupt newest checkpoint, resume auto" expect_rc 0 train --model cnn-small "${cnn[@]}" --out C --resume auto
check "  warns naming it and why" contains "step-00000016.*checksum mismatch"
check "  takes step 8 (mid-epoch) instead" contains "resumed from .*step-00000008 at step 8"
check "  final parameters still bit-identical" same_weights A C 48

check "an mlp resuming the cnn checkpoint exits 2" \
  expect_rc 2 train --model mlp "${cnn[@]}" --out B --resume auto
check "  explaining the mismatch" contains "was written for cnn-small.* but this run builds mlp.*; first difference: "
check "an explicit --resume PATH of another model exits 2" \
  expect_rc 2 train --model mlp "${cnn[@]}" --out D --resume "$work/C0/checkpoints/step-00000008"
check "  naming the checkpoint" contains "C0/checkpoints/step-00000008 was written for"
check "  and leaves no run directory behind" test ! -e D/metrics.jsonl
check "an explicit corrupt checkpoint exits 2" \
  expect_rc 2 train --model cnn-small "${cnn[@]}" --out D --resume "$work/C0/checkpoints/step-00000016"
check "  naming the file" contains "step-00000016/tensors.bin: checksum mismatch"

check "a 2-rank checkpoint resumes on 1 rank" \
  expect_rc 0 "$MPIEXEC" -np 1 "$S" train --data data.h5 --threads 1 --model cnn-small "${cnn[@]}" --out C0 --resume \
  "$work/C0/checkpoints/step-00000008"
check "  warning that the data order changes" contains "resuming a 2-rank checkpoint on 1 ranks"

# Augmentation draws from (seed, epoch, sample): a resume mid-epoch stays bit-identical, in the
# memory mode (batches made on the prefetch thread) here and the stream mode below.
aug=(--augment-crop-padding 2 --augment-flip --augment-rotate 10 --augment-erase 0.5)
check "cnn + augmentation: uninterrupted run of 48 steps" expect_rc 0 train --model cnn-small "${cnn[@]}" "${aug[@]}" --out I --resume none
check "  augmentation is on" contains "augmentation: rotate up to 10 deg, random crop with padding 2, horizontal flip, random erasing p 0.5"
check "  and changes the trajectory" sh -c "test -s I/checkpoints/step-00000048/tensors.bin && ! cmp -s A/checkpoints/step-00000048/tensors.bin I/checkpoints/step-00000048/tensors.bin"
check "cnn + augmentation: killed run (-9 at step 27)" killed_run J 27 24 --model cnn-small "${cnn[@]}" "${aug[@]}"
check "  resume auto to 48" expect_rc 0 train --model cnn-small "${cnn[@]}" "${aug[@]}" --out J --resume auto
check "  from step 24 (mid-epoch)" contains "resumed from .*step-00000024 at step 24"
check "  final parameters bit-identical" same_weights I J 48
check "evaluation never augments: slimtrain eval of the final checkpoint" expect_rc 0 "$MPIEXEC" -np 2 "$S" eval --checkpoint I --data data.h5 --split test --threads 1
check "  reports the trainer's final test loss" contains "mean loss $("$PY" -c 'import json, sys; print("%.4f" % json.loads(sys.argv[1])["loss"])' "$(event_field I done test)")"

mlp=(--model mlp --mlp-widths 32,16 --batch-size 8 --max-steps 40 --optimizer adamw --lr 0.003
     --weight-decay 0.01 --schedule step --step-every 12 --step-gamma 0.5 --warmup-steps 3
     --clip-grad-norm 0.5 --label-smoothing 0.1 --log-every 5 --checkpoint-every 5
     --data-mode stream "${aug[@]}")
check "mlp: uninterrupted run of 40 steps" expect_rc 0 train "${mlp[@]}" --out E --resume none
check "mlp: killed run (-9 at step 14)" killed_run F 14 10 "${mlp[@]}"
check "mlp: resume auto to 40" expect_rc 0 train "${mlp[@]}" --out F --resume auto
check "  from step 10 (mid-epoch, stream reader)" contains "resumed from .*step-00000010 at step 10"
check "  final parameters bit-identical" same_weights E F 40

# Every exported weight, compared by h5diff (the files differ only in the source path attribute).
same_datasets() {
  local names
  names=$(h5ls -r A.h5 | awk '$2 == "Dataset" {print $1}')
  [ -n "$names" ] || return 1
  for d in $names; do h5diff A.h5 B.h5 "$d" "$d" || return 1; done
}
check "export of both final checkpoints" expect_rc 0 sh -c \
  "'$S' export --checkpoint A -o A.h5 && '$S' export --checkpoint B -o B.h5"
check "  h5diff finds every weight equal" same_datasets
finish
