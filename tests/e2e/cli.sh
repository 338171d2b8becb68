#!/usr/bin/env bash
# The binary's surface: --help lists the five subcommands; usage mistakes exit 2 with one line.
. "$(dirname "$0")/lib.sh"

check "--help exits 0" expect_rc 0 "$SLIMTRAIN_BIN" --help
for c in prep train eval inspect export; do
  check "--help lists $c" contains "^  $c "
done
check "no command exits 2" expect_rc 2 "$SLIMTRAIN_BIN"
check "unknown command exits 2" expect_rc 2 "$SLIMTRAIN_BIN" frobnicate
check "  and names it" contains "unknown command 'frobnicate'"
check "--version" expect_rc 0 "$SLIMTRAIN_BIN" --version
check "  prints the version" contains "^slimtrain [0-9]"
check "  and the commit it was built from" eval 'grep -qE "^slimtrain [0-9.]+ \(commit ([0-9a-f]{12}(\+changes)?|unknown)\)$" <<<"$out"'
check "  LibTorch, MPI (headers and loaded), HDF5 and NCCL" eval 'grep -q "^  LibTorch  1\.13\." <<<"$out" && grep -q "^  MPI       Open MPI 4\.1\.[0-9]* (headers), MPI 3\.1; loaded: Open MPI v4\.1" <<<"$out" && grep -q "^  HDF5      1\.10\.[0-9]* (parallel)" <<<"$out" && grep -q "^  NCCL      " <<<"$out"'
if [ "$(git -C "$SLIMTRAIN_SOURCE_DIR" rev-parse --short=12 HEAD 2>/dev/null)" != "" ]; then
  check "  the commit is this checkout's" contains "(commit $(git -C "$SLIMTRAIN_SOURCE_DIR" rev-parse --short=12 HEAD)"
fi
finish
