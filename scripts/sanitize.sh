#!/usr/bin/env bash
# The unit and mpi tiers again, built with AddressSanitizer and UndefinedBehaviorSanitizer: no
# recovery, so the first report fails its test (scripts/test.sh runs this after the normal build;
# SANITIZE=0 there skips it). Only those tiers' test programs are built, into
# ${SANITIZE_BUILD_DIR:-build-sanitize}, at -O1 with line tables for readable reports.
#   scripts/sanitize.sh [ctest arguments]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${JOBS:-$(nproc)}

args=()
if [ "${CI:-}" = "true" ]; then
  args+=(-DSLIMTRAIN_WERROR=ON)
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -g1" \
  -DCMAKE_C_FLAGS="-O1 -g1" -DSLIMTRAIN_SANITIZE=address,undefined -DSLIMTRAIN_WITH_NCCL=OFF \
  -DSLIMTRAIN_BUILD_BENCH=OFF "${args[@]}"
cmake --build "$build" -j "$jobs" --target slimtrain_tests_unit slimtrain_tests_mpi

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$build"
ctest --output-on-failure -j "${JOBS:-2}" --timeout 900 -L '^(unit|mpi)$' "$@"
