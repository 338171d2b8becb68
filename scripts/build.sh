#!/usr/bin/env bash
# Configures and builds slimtrain into ${BUILD_DIR:-build}. Extra arguments go to cmake.
# BUILD_TARGET=slimtrain builds only the binary (the demo), not the tests and benchmarks.
# Under CI (CI=true) warnings are errors and the CUDA/NCCL backend must compile and link.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
jobs=${JOBS:-$(nproc)}

args=()
if [ "${CI:-}" = "true" ]; then
  args+=(-DSLIMTRAIN_WERROR=ON -DSLIMTRAIN_WITH_NCCL=ON)
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "${args[@]}" "$@"
cmake --build "$build" -j "$jobs" ${BUILD_TARGET:+--target "$BUILD_TARGET"}
