# Sourced by bench/*/run.sh once they have set root, build and bench_name: the slimtrain binary,
# the Python interpreter of the peers (Debian's, with python3-torch and python3-h5py), a work
# directory removed on exit, and the Fashion-MNIST HDF5 file in $data (data/fashion-mnist.h5 if
# present, else converted into the work directory).
bin=$build/apps/slimtrain
[ -x "$bin" ] || { echo "bench/$bench_name: no $bin (build slimtrain first)" >&2; exit 2; }
PY=/usr/bin/python3
# The peers again on PyTorch 2.x (scripts/install-deps.sh --torch pip), where it is installed:
# users compare with the PyTorch they have. Empty when there is none.
PY2=${TORCH_VENV:-$root/.torch-venv}/bin/python
"$PY2" -c "import torch, h5py" 2>/dev/null || PY2=
# slimtrain built against that LibTorch (TORCH=pip scripts/build.sh), where it is built.
bin2=${TORCH2_BUILD_DIR:-$root/build-torch2}/apps/slimtrain
[ -x "$bin2" ] || bin2=
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
# The benchmarks measure slimtrain as it chooses OpenBLAS's kernels (runtime/blas_kernels.hpp),
# and give its peers the same kernels. An OPENBLAS_CORETYPE found in the environment would pin
# every program to one set: some machines' login environments set one (an AVX-512 EPYC here had
# OPENBLAS_CORETYPE=Haswell, 1.8x slower than the kernels OpenBLAS picks by itself). It is
# unset, and kept in bench_env_coretype for the scripts that report it;
# BENCH_KEEP_OPENBLAS_CORETYPE=1 keeps it.
bench_env_coretype=${BENCH_ENV_OPENBLAS_CORETYPE:-${OPENBLAS_CORETYPE:-}}
export BENCH_ENV_OPENBLAS_CORETYPE=$bench_env_coretype  # for the scripts run.sh runs in turn
if [ -n "${OPENBLAS_CORETYPE:-}" ] && [ "${BENCH_KEEP_OPENBLAS_CORETYPE:-0}" != 1 ]; then
  echo "bench/$bench_name: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE from the environment unset (slimtrain chooses the kernels; BENCH_KEEP_OPENBLAS_CORETYPE=1 keeps it)"
  unset OPENBLAS_CORETYPE
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

data=$root/data/fashion-mnist.h5
if [ ! -f "$data" ]; then
  data=$work/fashion-mnist.h5
  echo "preparing $data from Fashion-MNIST"
  "$root/scripts/fashion-data.sh" "$bin" "$data" >/dev/null
fi

# positive_ints VALUE...: exit 2 naming the first that is not a positive integer.
positive_ints() {
  local n
  for n; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench/$bench_name: '$n' is not a positive integer" >&2; exit 2; }
  done
}

# torch_version PYTHON: the PyTorch version that interpreter imports ("1.13.0a0", "2.11.0+cu130").
torch_version() { "$1" -c 'import torch; print(torch.__version__)' 2>/dev/null; }
# libtorch_version BINARY: the LibTorch a slimtrain binary was built against ("2.11.0").
libtorch_version() { "$1" --version | sed -n 's/^  LibTorch  \([0-9.]*\).*/\1/p'; }
