#!/usr/bin/env bash
# The README's test command: installs what is missing, builds against both LibTorches and runs the
# tests with CTest, in three passes:
#   1. Debian's LibTorch 1.13 (build/): every tier. Tiers are CTest labels: unit, mpi, gpu
#      (skipped without a CUDA device), e2e, ...
#   2. PyTorch 2.x's LibTorch from the package index (build-torch2/, a CUDA LibTorch: every CUDA
#      branch compiles and links): the tiers where the torch version matters, label
#      unit, mpi or torch (TorchScript, checkpoints and resume, export, bf16, sharding, interop
#      with pass 1's binary). TORCH2=0 skips it.
#   3. The unit and mpi tiers again in a build under ASan and UBSan (scripts/sanitize.sh;
#      SANITIZE=0 skips it).
# Arguments go to every CTest call. Every pass runs; the exit code is non-zero if any failed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
build2=${TORCH2_BUILD_DIR:-$root/build-torch2}
times=()
t=$SECONDS
lap() { times+=("$(printf '%-34s %5d s' "$1" $((SECONDS - t)))"); t=$SECONDS; }

"$root/scripts/install-deps.sh" $([ "${TORCH2:-1}" != 0 ] && echo --torch pip)
lap "install"
BUILD_DIR=$build "$root/scripts/build.sh"
lap "build (LibTorch 1.13)"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
rc=0
# -j2: two cores; mpi tests declare how many processes they take so CTest does not overbook.
(cd "$build" && ctest --print-labels && ctest --output-on-failure -j "${JOBS:-2}" --timeout 900 "$@") || rc=1
lap "tests (LibTorch 1.13, every tier)"

if [ "${TORCH2:-1}" != 0 ]; then
  if TORCH=pip BUILD_DIR=$build2 "$root/scripts/build.sh" -DSLIMTRAIN_BUILD_BENCH=OFF \
    -DSLIMTRAIN_INTEROP_BIN="$build/apps/slimtrain"; then
    lap "build (LibTorch 2.x)"
    (cd "$build2" && ctest --output-on-failure -j "${JOBS:-2}" --timeout 900 \
      -L '^(unit|mpi|torch)$' "$@") || rc=1
    lap "tests (LibTorch 2.x: unit, mpi, torch)"
  else
    rc=1
    lap "build (LibTorch 2.x) FAILED"
  fi
fi

if [ "${SANITIZE:-1}" != 0 ]; then
  "$root/scripts/sanitize.sh" "$@" || rc=1
  lap "sanitizers (unit, mpi)"
fi
echo "test.sh: time of each part"
printf '  %s\n' "${times[@]}"
exit "$rc"
