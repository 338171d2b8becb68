#!/usr/bin/env bash
# `slimtrain export` end to end: real checkpoints from ckpt_fixture, exported to HDF5, loaded by
# PyTorch through h5py; refusals (existing output, corrupt checkpoint) exit 2 and leave no file.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c "import torch, h5py" 2>/dev/null || { echo "skip: /usr/bin/python3 lacks torch or h5py"; exit 77; }
: "${CKPT_FIXTURE:?run through ctest, which sets CKPT_FIXTURE}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run=$tmp/run
step20=$run/checkpoints/step-00000020
check_py() { out=$("$PY" "$(dirname "$0")/ckpt_export_check.py" "$@" 2>&1) || { echo "$out" | sed 's/^/  | /'; return 1; }; }
no_leftovers() { ! ls -A "$tmp" | grep -q '\.tmp-'; }

check "fixture writes two checkpoints" expect_rc 0 "$CKPT_FIXTURE" "$run"
check "export a step directory" expect_rc 0 "$SLIMTRAIN_BIN" export --checkpoint "$step20" -o "$tmp/w.h5"
check "  PyTorch loads it and the values match" check_py "$tmp/w.h5" 20
check "existing output is refused" expect_rc 2 "$SLIMTRAIN_BIN" export --checkpoint "$step20" -o "$tmp/w.h5"
check "  naming the file and --force" contains "w.h5 already exists; pass --force"
check "--force replaces it" expect_rc 0 "$SLIMTRAIN_BIN" export --checkpoint "$run/checkpoints/step-00000010" -o "$tmp/w.h5" --force
check "  with step 10's weights" check_py "$tmp/w.h5" 10
check "a run directory exports its newest checkpoint" expect_rc 0 "$SLIMTRAIN_BIN" export --checkpoint "$run" -o "$tmp/run.h5"
check "  which is step 20" check_py "$tmp/run.h5" 20

printf '\xff' | dd of="$step20/tensors.bin" bs=1 seek=40 conv=notrunc status=none
check "a corrupt checkpoint exits 2" expect_rc 2 "$SLIMTRAIN_BIN" export --checkpoint "$step20" -o "$tmp/bad.h5"
check "  naming the file and the problem" contains "step-00000020/tensors.bin: checksum mismatch"
check "  and writes nothing" test ! -e "$tmp/bad.h5"
check "the run directory falls back to step 10" expect_rc 0 "$SLIMTRAIN_BIN" export --checkpoint "$run" -o "$tmp/fallback.h5"
check "  warning about step 20" contains "skipping .*step-00000020: .*checksum mismatch"
check "  with step 10's weights" check_py "$tmp/fallback.h5" 10

check "--embeddings without --data exits 2" expect_rc 2 "$SLIMTRAIN_BIN" export --checkpoint "$run" -o "$tmp/e.h5" --embeddings
check "  plainly" contains "needs --data"
check "missing --checkpoint exits 2" expect_rc 2 "$SLIMTRAIN_BIN" export -o "$tmp/x.h5"
check "a missing checkpoint exits 2" expect_rc 2 "$SLIMTRAIN_BIN" export --checkpoint "$tmp/nope" -o "$tmp/x.h5"
check "  naming it" contains "nope"
# -o checked before the checkpoint is read (issue 60): a directory where a file is expected, a
# file where a directory is, a directory that does not exist; nothing made.
check "-o naming a directory: exit 2" expect_rc 2 "$SLIMTRAIN_BIN" export --checkpoint "$run" -o "$tmp"
check "  named as a directory" contains "-o: $tmp is a directory; name the file to write"
touch "$tmp/plain"
check "--hf -o naming a file: exit 2" expect_rc 2 "$SLIMTRAIN_BIN" export --hf --checkpoint "$run" -o "$tmp/plain"
check "  named as a file" contains "-o: $tmp/plain is a file; name a directory to write into"
check "-o in a directory that does not exist: exit 2" expect_rc 2 "$SLIMTRAIN_BIN" export --checkpoint "$run" -o "$tmp/none/w.h5"
check "  naming the directory" contains "its directory $tmp/none does not exist"
check "-o under a file: exit 2" expect_rc 2 "$SLIMTRAIN_BIN" export --checkpoint "$run" -o "$tmp/plain/w.h5"
check "  naming the file in the way" contains "its directory $tmp/plain is a file"
check "--hf -o under a file: exit 2" expect_rc 2 "$SLIMTRAIN_BIN" export --hf --checkpoint "$run" -o "$tmp/plain/hf/out"
check "  naming the file in the way" contains "cannot create the directory $tmp/plain/hf/out: $tmp/plain is a file"
check "  before the checkpoint is read" bash -c '! grep -q "checksum" <<<"$1"' _ "$out"
check "  nothing made" test ! -e "$tmp/none"
check "no temporary files are left" no_leftovers
finish
