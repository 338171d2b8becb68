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
finish
