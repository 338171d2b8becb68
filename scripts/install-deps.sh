#!/usr/bin/env bash
# Installs the Debian packages slimtrain builds, tests and benchmarks against.
# Idempotent: packages already present are skipped, and apt-get update runs at most once.
# --demo: only what building and running the demo needs (scripts/demo.sh).
# --torch pip: also PyTorch 2.x from the package index, in a virtual environment
#   (scripts/torch-venv.sh: .torch-venv/, or TORCH_VENV), for the second LibTorch build and the
#   tests' and peers' Python side. scripts/test.sh asks for it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
demo=0
torch_pip=0
while [ $# -gt 0 ]; do
  case $1 in
    --demo) demo=1 ;;
    --torch)
      [ "${2:-}" = pip ] || { echo "install-deps: --torch takes 'pip' (got '${2:-}')" >&2; exit 2; }
      torch_pip=1; shift ;;
    *) echo "install-deps: unknown option '$1' (--demo, --torch pip)" >&2; exit 2 ;;
  esac
  shift
done

# What building and running slimtrain needs (the demo installs only these: --demo).
packages=(
  build-essential cmake pkg-config
  libtorch-dev libopenmpi-dev openmpi-bin libhdf5-openmpi-dev
  libboost-program-options-dev libgtest-dev libbenchmark-dev
  nlohmann-json3-dev libxxhash-dev zlib1g-dev libjpeg62-turbo-dev libpng-dev libsentencepiece-dev
  libicu-dev
  libopenblas0-openmp
  dataset-fashion-mnist
)
# What the tests and benchmarks add: peers and test data in Python, real text (fortunes), HDF5's
# tools, clang for the sanitizer and fuzzing builds, Slurm, network namespaces, and Chromium to
# render the report.
if [ "$demo" = 0 ]; then
  packages+=(
    hdf5-tools python3-torch python3-h5py python3-numpy python3-pil python3-sentencepiece fortunes
    clang-14 libclang-rt-14-dev
    slurmctld slurmd slurm-client munge
    iproute2 util-linux procps
    chromium
  )
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  if [ -n "$sudo" ] && ! command -v sudo >/dev/null; then
    echo "install-deps: need root or sudo to install: ${missing[*]}" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# LibTorch calls whichever libblas.so.3 the alternatives name. OpenBLAS's OpenMP build runs its
# threads in LibTorch's own OpenMP team (the pthreads build, which Debian prefers when both are
# installed, keeps a pool beside it: a third busy thread on a 2-thread rank, and 3,000 instead of
# 3,960 samples/s for cnn-small on 2 threads here). Alternatives an administrator set by hand
# (manual mode) are left alone.
openmp=/usr/lib/x86_64-linux-gnu/openblas-openmp
for alt in libblas.so.3 liblapack.so.3 libopenblas.so.0; do
  name=$alt-$(uname -m)-linux-gnu
  query=$(update-alternatives --query "$name" 2>/dev/null) || continue
  grep -qx "Status: auto" <<<"$query" || { echo "install-deps: $name set by hand, left alone"; continue; }
  grep -qx "Value: $openmp/$alt" <<<"$query" && continue
  if grep -qx "Alternative: $openmp/$alt" <<<"$query"; then
    $sudo update-alternatives --quiet --set "$name" "$openmp/$alt"
    echo "install-deps: $name -> $openmp/$alt (OpenBLAS, OpenMP build)"
  fi
done

if [ "$torch_pip" = 1 ]; then
  "$root/scripts/torch-venv.sh"
fi
