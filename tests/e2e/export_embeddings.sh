#!/usr/bin/env bash
# `slimtrain export --embeddings` end to end: a one-process training run, then the features of the
# test split, recomputed in PyTorch from the exported weights; refusals exit 2 and leave nothing.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
"$PY" -c "import torch, h5py, numpy" 2>/dev/null || { echo "skip: /usr/bin/python3 lacks torch, h5py or numpy"; exit 77; }
check_py="$(dirname "$0")/export_embeddings_check.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMP_NUM_THREADS=1

"$PY" "$check_py" make-data "$tmp"
check "prep the data" expect_rc 0 "$SLIMTRAIN_BIN" prep npy --train-x "$tmp/train-x.npy" --train-y "$tmp/train-y.npy" \
  --test-x "$tmp/test-x.npy" --test-y "$tmp/test-y.npy" -o "$tmp/d.h5"
check "train an mlp for 20 steps as one process" expect_rc 0 "$SLIMTRAIN_BIN" train --data "$tmp/d.h5" \
  --model mlp --mlp-widths 16,8 --max-steps 20 --batch-size 8 --threads 1 --out "$tmp/run" --resume none
check "export the weights" expect_rc 0 "$SLIMTRAIN_BIN" export --checkpoint "$tmp/run" -o "$tmp/w.h5"
check "export the test embeddings" expect_rc 0 "$SLIMTRAIN_BIN" export --embeddings --checkpoint "$tmp/run" \
  --data "$tmp/d.h5" --split test --batch-size 5 -o "$tmp/e.h5"
check "  reports the rows" contains "exported 37 embeddings of split 'test'"
pycheck() { out=$("$PY" "$check_py" check "$tmp/d.h5" "$tmp/w.h5" "$tmp/e.h5" 2>&1) || { echo "$out" | sed 's/^/  | /'; return 1; }; }
check "  PyTorch recomputes the same features" pycheck

check "without --data exits 2" expect_rc 2 "$SLIMTRAIN_BIN" export --embeddings --checkpoint "$tmp/run" -o "$tmp/x.h5"
check "  naming --data" contains "needs --data"
check "a split the file lacks exits 2" expect_rc 2 "$SLIMTRAIN_BIN" export --embeddings --checkpoint "$tmp/run" \
  --data "$tmp/d.h5" --split val -o "$tmp/x.h5"
check "  naming it" contains "no split 'val'"
"$PY" -c "import numpy as np; np.save('$tmp/w-x.npy', np.zeros((10, 5), np.float32)); np.save('$tmp/w-y.npy', np.arange(10) % 3)"
"$SLIMTRAIN_BIN" prep npy --train-x "$tmp/w-x.npy" --train-y "$tmp/w-y.npy" --test-x "$tmp/w-x.npy" --test-y "$tmp/w-y.npy" -o "$tmp/wide.h5" >/dev/null 2>&1
check "data of another shape exits 2" expect_rc 2 "$SLIMTRAIN_BIN" export --embeddings --checkpoint "$tmp/run" \
  --data "$tmp/wide.h5" -o "$tmp/x.h5"
check "  explaining the mismatch" contains "was trained for"
check "an existing output exits 2" expect_rc 2 "$SLIMTRAIN_BIN" export --embeddings --checkpoint "$tmp/run" \
  --data "$tmp/d.h5" -o "$tmp/e.h5"
check "no output or temporary file is left behind" test -z "$(ls -A "$tmp" | grep -E '^x\.h5$|\.tmp-')"
finish
