#!/bin/sh
# Runs bench_allreduce at np=2 and np=4 (4 ranks oversubscribe a 2-core machine).
# Usage: bench/allreduce/run.sh [build-dir] [max-MiB]
set -e
build=${1:-build}
max=${2:-256}
bin="$build/bench/allreduce/bench_allreduce"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mpirun -np 2 "$bin" "$max"
mpirun -np 4 --oversubscribe "$bin" "$max"
