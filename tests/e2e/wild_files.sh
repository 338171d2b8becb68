#!/usr/bin/env bash
# Files from the wild, made here: each ends train, eval or inspect with exit 2 in one line that
# names its cause, leaves no run directory, and carries no source location unless --log-level
# debug asks for it (about 15 s):
# - a TorchScript module with no trainable parameter (frozen, as mobile-optimised files are)
#   and one calling an operator LibTorch does not have;
# - an HDF5 file still marked open for write, a dataset behind a filter this HDF5 lacks (LZF),
#   a dataset behind an external link into a missing file: HDF5's own reason, in words.
. "$(dirname "$0")/lib.sh"
S=$SLIMTRAIN_BIN
PY=/usr/bin/python3
"$PY" -c "import torch, h5py" 2>/dev/null || { echo "skipped: /usr/bin/python3 lacks torch or h5py"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
make() { "$PY" "$SLIMTRAIN_SOURCE_DIR/tests/e2e/wild_files.py" "$@" || exit 1; }
for w in plain open-for-write lzf external; do make "$w" "$work/$w.h5"; done
make frozen "$work/frozen.pt"
make unknown-op "$work/unknown-op.pt"
one_line() { [ "$(grep -c . <<<"$out")" = 1 ] || { echo "  $(grep -c . <<<"$out") lines:"; echo "$out" | head -5; return 1; }; }
no_location() { ! grep -qE '\([a-z_]+\.cpp:[0-9]+\)' <<<"$out" || { echo "  a source location: $out"; return 1; }; }
job=(--batch-size 8 --threads 1 --eval-every 0 --max-steps 2)

check "a frozen TorchScript module exits 2" expect_rc 2 "$S" train --data "$work/plain.h5" \
  --model "torchscript:$work/frozen.pt" --out "$work/r-frozen" "${job[@]}"
check "  in one line: it has no trainable parameter" one_line
check "  (the words)" contains "frozen.pt: the module has no trainable parameter"
check "  before anything started: no run directory" test ! -e "$work/r-frozen"
check "  no source location" no_location
check "an operator LibTorch lacks exits 2" expect_rc 2 "$S" train --data "$work/plain.h5" \
  --model "torchscript:$work/unknown-op.pt" --out "$work/r-op" "${job[@]}"
check "  in one line naming it" one_line
check "  (the words)" contains "unknown-op.pt: uses wild::shuffle_rows, an operator of another library (wild)"
check "  no run directory" test ! -e "$work/r-op"
check "  with --log-level debug, LibTorch's report follows" expect_rc 2 "$S" train \
  --data "$work/plain.h5" --model "torchscript:$work/unknown-op.pt" --out "$work/r-op" \
  "${job[@]}" --log-level debug
check "  (the compiler's trace)" contains "Unknown builtin op: wild::shuffle_rows"
check "  and the source location" contains "(script_archive.cpp:[0-9]*)"

for cmd in "inspect" "inspect --validate" "train"; do
  args=($cmd)
  [ "$cmd" = train ] && args+=(--out "$work/r" "${job[@]}" --data)
  check "$cmd of a file left open for write exits 2" expect_rc 2 "$S" "${args[@]}" "$work/open-for-write.h5"
  check "  naming HDF5's reason" contains "open-for-write.h5: cannot open the file: file is already open for write (may use <h5clear file> to clear file consistency flags)"
  check "  in one line, no C++ in it, no source location" eval 'one_line && no_location && ! grep -q "H5Fopen\|c_str" <<<"$out"'
  check "$cmd of a dataset behind an external link to a missing file exits 2" expect_rc 2 "$S" "${args[@]}" "$work/external.h5"
  check "  naming the link's target" contains "external.h5: /train/x is an external link to gone.h5:/train/x, which cannot be opened"
  check "  in one line" one_line
done
check "inspect of a dataset behind a filter this HDF5 lacks exits 2" expect_rc 2 "$S" inspect "$work/lzf.h5"
check "  naming the filter" contains "lzf.h5: /train/x is compressed with the filter 'lzf' (HDF5 filter 32000), which this HDF5 does not have"
check "train of it exits 2 with the same words" expect_rc 2 "$S" train --data "$work/lzf.h5" --out "$work/r" "${job[@]}"
check "  (the line)" contains "lzf.h5: /train/x is compressed with the filter 'lzf' (HDF5 filter 32000), which this HDF5 does not have"
check "  in one line, no C++ in it" eval 'one_line && ! grep -q "H5Dread" <<<"$out"'
check "  no run directory" test ! -e "$work/r"
finish
