#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, runs every test tier with CTest.
# Tiers are CTest labels: unit, mpi, gpu (skipped without a CUDA device), e2e, ... Then the unit
# and mpi tiers again in a second build under ASan and UBSan (scripts/sanitize.sh; SANITIZE=0
# skips it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$build"
ctest --print-labels
# -j2: two cores; mpi tests declare how many processes they take so CTest does not overbook.
ctest --output-on-failure -j "${JOBS:-2}" --timeout 900 "$@"
if [ "${SANITIZE:-1}" != 0 ]; then
  "$root/scripts/sanitize.sh" "$@"
fi
