#!/usr/bin/env bash
# Installs the Debian packages slimtrain builds, tests and benchmarks against.
# Idempotent: packages already present are skipped, and apt-get update runs at most once.
# --demo: only what building and running the demo needs (scripts/demo.sh).
set -euo pipefail

# What building and running slimtrain needs (the demo installs only these: --demo).
packages=(
  build-essential cmake pkg-config
  libtorch-dev libopenmpi-dev openmpi-bin libhdf5-openmpi-dev
  libboost-program-options-dev libgtest-dev libbenchmark-dev
  nlohmann-json3-dev libxxhash-dev zlib1g-dev libjpeg62-turbo-dev libpng-dev
  dataset-fashion-mnist
)
# What the tests and benchmarks add: peers and test data in Python, HDF5's tools, clang for the
# sanitizer and fuzzing builds, Slurm, network namespaces, and Chromium to render the report.
if [ "${1:-}" != "--demo" ]; then
  packages+=(
    hdf5-tools python3-torch python3-h5py python3-numpy python3-pil
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

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
