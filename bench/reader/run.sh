#!/bin/sh
# Runs bench_reader (memory and stream mode against the python3-h5py peer) on Fashion-MNIST,
# or on FILE.h5 when given, then bench_ragged (layout 2: --group-by-length against without).
# Usage: bench/reader/run.sh [build-dir] [FILE.h5] [batch]
set -e
build=${1:-build}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
"$build/bench/reader/bench_reader" "${2:-}" "${3:-64}"
"$build/bench/reader/bench_ragged" 32 3
