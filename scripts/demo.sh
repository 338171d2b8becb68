#!/usr/bin/env bash
# The README's main job: install what building and running needs, build the slimtrain binary
# only (not the tests and benchmarks), convert Fashion-MNIST to HDF5, train cnn-small on two MPI
# ranks with jobs/fashion_demo.ini, write the HTML report and print a short summary.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
run_dir=${RUN_DIR:-$root/runs/fashion-demo}
data=${DATA:-$root/data/fashion-mnist.h5}
started=$(date +%s)

"$root/scripts/install-deps.sh" --demo
BUILD_TARGET=slimtrain "$root/scripts/build.sh"
bin="$build/apps/slimtrain"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
built=$(date +%s)

[ -f "$data" ] || "$root/scripts/fashion-data.sh" "$bin" "$data"
"$bin" inspect "$data"

mpirun -np 2 --oversubscribe "$bin" train --config "$root/jobs/fashion_demo.ini" \
  --data "$data" --out "$run_dir" --resume none
echo
"$bin" report "$run_dir"
echo "demo: $(( built - started )) s to install and build, $(( $(date +%s) - built )) s to prepare and train"
