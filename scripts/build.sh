#!/usr/bin/env bash
# Configures and builds slimtrain. Extra arguments go to cmake.
#   TORCH=debian (default): against Debian's LibTorch 1.13 (CPU), into ${BUILD_DIR:-build}
#   TORCH=pip: against the PyTorch 2.x that `scripts/install-deps.sh --torch pip` put in
#     ${TORCH_VENV:-.torch-venv} (a CUDA LibTorch), into ${BUILD_DIR:-build-torch2}, with the
#     CUDA toolkit at /usr/local/cuda (CUDAToolkit_ROOT names another): every CUDA branch compiles
#     and links, and runs on a CPU as well.
# BUILD_TARGET=slimtrain builds only the binary (the demo), not the tests and benchmarks.
# Under CI (CI=true) warnings are errors and the CUDA/NCCL backend must compile and link; with
# TORCH=pip, so must every branch that needs a CUDA LibTorch.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-$(nproc)}
torch=${TORCH:-debian}

args=()
case $torch in
  debian) build=${BUILD_DIR:-$root/build} ;;
  pip)
    build=${BUILD_DIR:-$root/build-torch2}
    venv=${TORCH_VENV:-$root/.torch-venv}
    if ! [ -x "$venv/bin/python" ] || ! prefix=$("$venv/bin/python" -c \
      'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null); then
      echo "build: TORCH=pip needs PyTorch in $venv: run scripts/install-deps.sh --torch pip" >&2
      exit 2
    fi
    args+=(-DCMAKE_PREFIX_PATH="$prefix" -DSLIMTRAIN_TORCH_PYTHON="$venv/bin/python")
    [ "${CI:-}" = "true" ] && args+=(-DSLIMTRAIN_REQUIRE_TORCH_CUDA=ON)
    ;;
  *) echo "build: TORCH must be debian or pip (got '$torch')" >&2; exit 2 ;;
esac
if [ "${CI:-}" = "true" ]; then
  args+=(-DSLIMTRAIN_WERROR=ON -DSLIMTRAIN_WITH_NCCL=ON)
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" "${args[@]}" "$@"
cmake --build "$build" -j "$jobs" ${BUILD_TARGET:+--target "$BUILD_TARGET"}
