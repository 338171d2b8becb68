#!/usr/bin/env bash
# The binary's surface: --help lists the five subcommands; usage mistakes exit 2 with one line.
. "$(dirname "$0")/lib.sh"

check "--help exits 0" expect_rc 0 "$SLIMTRAIN_BIN" --help
for c in prep train eval inspect export; do
  check "--help lists $c" contains "^  $c "
done
check "train --help exits 0" expect_rc 0 "$SLIMTRAIN_BIN" train --help
for m in mlp cnn-small cnn-bn vit-tiny text-bow text-transformer torchscript:PATH; do
  check "  names --model $m" contains "$m"
done
check "no command exits 2" expect_rc 2 "$SLIMTRAIN_BIN"
check "unknown command exits 2" expect_rc 2 "$SLIMTRAIN_BIN" frobnicate
check "  and names it" contains "unknown command 'frobnicate'"
check "--version" expect_rc 0 "$SLIMTRAIN_BIN" --version
check "  prints the version" contains "^slimtrain [0-9]"
check "  and the commit it was built from" eval 'grep -qE "^slimtrain [0-9.]+ \(commit ([0-9a-f]{12}(\+changes)?|unknown)\)$" <<<"$out"'
check "  LibTorch, MPI (headers and loaded), HDF5 and NCCL" eval 'grep -q "^  LibTorch  $SLIMTRAIN_TORCH_VERSION\\.[0-9]* (headers)" <<<"$out" && grep -q "^  MPI       Open MPI 4\.1\.[0-9]* (headers), MPI 3\.1; loaded: Open MPI v4\.1" <<<"$out" && grep -q "^  HDF5      1\.10\.[0-9]* (parallel)" <<<"$out" && grep -q "^  NCCL      " <<<"$out"'
if [ "$(git -C "$SLIMTRAIN_SOURCE_DIR" rev-parse --short=12 HEAD 2>/dev/null)" != "" ]; then
  check "  the commit is this checkout's" contains "(commit $(git -C "$SLIMTRAIN_SOURCE_DIR" rev-parse --short=12 HEAD)"
fi
# A rank that exits 2 says so in the job scripts' failure report, so that a launcher's own code
# for the ranks it then killed (srun: 137) is not taken for a crash and relaunched.
report=$(mktemp -d)
check "a bad option with SLIMTRAIN_FAILURE_FILE set exits 2" expect_rc 2 \
  env SLIMTRAIN_FAILURE_FILE="$report/failure-report.txt" SLURM_PROCID=1 \
  "$SLIMTRAIN_BIN" train --data /nonexistent.h5 --out "$report/run" --batch-size 0
check "  and reports it: rank, host, exit 2, the option" \
  grep -q "^rank 1 on $(uname -n) exit 2: .*--batch-size" "$report/failure-report.txt"
check "  jobs/watch.sh: a launcher's 137 beside that report is the job's 2" eval \
  '[ "$(. "$SLIMTRAIN_SOURCE_DIR/jobs/watch.sh" && SLIMTRAIN_FAILURE_FILE="$report/failure-report.txt" && failure_exit_code 137)" = 2 ]'
check "  and a 137 without one stays 137" eval \
  '[ "$(. "$SLIMTRAIN_SOURCE_DIR/jobs/watch.sh" && SLIMTRAIN_FAILURE_FILE="$report/none.txt" && failure_exit_code 137)" = 137 ]'
# Found by fuzz_ini: an INI key holding one of Boost's message placeholders hung train forever.
printf 'warmup-s%%canonical_option%%-flip = true\n' >"$report/placeholder.ini"
check "an INI key with a Boost placeholder exits 2 (within 20 s, no hang)" expect_rc 2 \
  timeout 20 "$SLIMTRAIN_BIN" train --data d.h5 --out "$report/run" --config "$report/placeholder.ini"
check "  naming the file" contains "--config $report/placeholder.ini: '%canonical_option%' cannot appear"
rm -rf "$report"
finish
