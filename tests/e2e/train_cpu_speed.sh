#!/usr/bin/env bash
# What makes CPU training fast, checked for effect rather than speed (speed is bench/train's):
# the start line names the BLAS LibTorch calls; --memory-format auto picks channels-last for
# cnn-bn and contiguous for cnn-small; --max-pool libtorch ends with the same weights as
# slimtrain's own pooling loop; a channels-last run resumed from its checkpoint ends
# with the same weights, byte for byte, as one that never stopped; --precision bf16 trains on a
# CPU with native bf16 (and is refused with exit 2 on one without); --precision auto picks bf16
# for cnn-small there and fp32 elsewhere, saying why; bad values exit 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/resume_lib.sh"
. "$(dirname "$0")/train_lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
make_data "$work" 16 1024 || { echo "cannot make the test data"; exit 1; }
job=(--data "$work/data.h5" --threads 1 --batch-size 32 --eval-every 0 --final-split test
     --log-every 10)

out=$("$MPIEXEC" -np 2 "$S" train "${job[@]}" --resume none --out "$work/small" --max-steps 20 2>&1)
check "cnn-small trains at np 2" test -f "$work/small/checkpoints/latest"
check "  the start line names the BLAS" contains "INFO  BLAS: [A-Za-z]"
check "  and the start event too" json_is "$(events "$work/small" start)" 'len(e["blas"]) > 0'
check "  memory contiguous (auto: cnn-small was slower in channels-last)" \
  contains "precision fp32, memory contiguous"
# cnn-small pools contiguous tensors with slimtrain's own loop: LibTorch's kernel gives the same
# weights, byte for byte (the rule and the gradient are LibTorch's).
out=$("$MPIEXEC" -np 2 "$S" train "${job[@]}" --resume none --out "$work/small-lt" --max-steps 20 \
  --max-pool libtorch 2>&1)
check "--max-pool libtorch: named in the start line" contains "LibTorch's max pooling"
check "  the same weights at step 20 as slimtrain's own loop" same_weights "$work/small" "$work/small-lt" 20

# A constant schedule: a cosine one depends on --max-steps, which differs between the runs.
bn=(--model cnn-bn --cnn-width 8 --checkpoint-every 10 --schedule constant)
out=$("$MPIEXEC" -np 2 "$S" train "${job[@]}" --resume none "${bn[@]}" --out "$work/bn" --max-steps 20 2>&1)
check "cnn-bn trains at np 2 in channels-last (auto)" contains "precision fp32, memory channels-last"
out=$("$MPIEXEC" -np 2 "$S" train "${job[@]}" --resume none "${bn[@]}" --out "$work/bn-resumed" --max-steps 10 2>&1)
out=$("$MPIEXEC" -np 2 "$S" train "${job[@]}" "${bn[@]}" --resume auto --out "$work/bn-resumed" \
  --max-steps 20 2>&1)
check "  resumed at step 10" contains "resumed from .*step-00000010 at step 10"
check "  the same weights at step 20 as without the stop" same_weights "$work/bn" "$work/bn-resumed" 20

if grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo; then
  out=$("$MPIEXEC" -np 2 "$S" train "${job[@]}" --resume none --precision bf16 --out "$work/bf16" --max-steps 40 2>&1)
  check "--precision bf16 trains on this CPU (native bf16)" test -f "$work/bf16/checkpoints/latest"
  check "  precision bf16 in the start line" contains "precision bf16"
  first_loss=$(events "$work/bf16" train | "$PY" -c "import json,sys; print(json.loads(sys.stdin.readline())['loss'])")
  check "  a finite loss that fell" json_is "$(events "$work/bf16" train | tail -n 1)" \
    "e['loss'] == e['loss'] and e['loss'] < $first_loss"
  check "  and a final evaluation above chance (0.25)" \
    json_is "$(events "$work/bf16" done)" 'e["final"]["accuracy"] > 0.4'
  out=$("$MPIEXEC" -np 2 "$S" train "${job[@]}" --resume none --precision auto --out "$work/auto" --max-steps 4 2>&1)
  if grep -qw amx_bf16 /proc/cpuinfo; then
    check "--precision auto: bf16 for cnn-small with AMX, with the measurement" \
      contains "precision bf16 (--precision auto: cnn-small measured [0-9.]*x the samples/s"
    check "  the start event records what ran" json_is "$(events "$work/auto" start)" \
      'e["precision"] == "bf16" and "auto" in e["precision_reason"]'
  else
    check "--precision auto: fp32 for cnn-small without AMX (0.76x measured), saying why" \
      contains "precision fp32 (--precision auto: cnn-small measured 0.76x"
  fi
else
  out=$("$MPIEXEC" -np 2 "$S" train "${job[@]}" --resume none --precision auto --out "$work/auto" --max-steps 4 2>&1)
  check "--precision auto: fp32 on a CPU without native bf16, saying why" \
    contains "precision fp32 (--precision auto: this CPU has no native bf16"
  check "--precision bf16 refused on a CPU without native bf16" \
    expect_rc 2 "$S" train "${job[@]}" --resume none --precision bf16 --out "$work/bf16" --max-steps 4
  check "  naming the option and the missing flags" contains "--precision bf16: this CPU has no native bf16"
  check "  leaving no run directory" test ! -e "$work/bf16"
fi

check "--max-pool fast: exit 2" \
  expect_rc 2 "$S" train "${job[@]}" --resume none --max-pool fast --out "$work/bad" --max-steps 4
check "  naming the option" contains "--max-pool"
check "  leaving no run directory" test ! -e "$work/bad"
check "--precision fp16: exit 2" \
  expect_rc 2 "$S" train "${job[@]}" --resume none --precision fp16 --out "$work/bad" --max-steps 4
check "  naming the option" contains "--precision"
check "  leaving no run directory" test ! -e "$work/bad"
check "--memory-format sideways: exit 2" \
  expect_rc 2 "$S" train "${job[@]}" --resume none --memory-format sideways --out "$work/bad" --max-steps 4
check "  naming the option" contains "--memory-format"
check "  leaving no run directory" test ! -e "$work/bad"
finish
