#!/usr/bin/env bash
# The README's main job: install, build, convert Fashion-MNIST to HDF5, train cnn-small on two
# MPI ranks with jobs/fashion_demo.ini, and print the test accuracy.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
run_dir=${RUN_DIR:-$root/runs/fashion-demo}
data=${DATA:-$root/data/fashion-mnist.h5}

"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
bin="$build/apps/slimtrain"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

[ -f "$data" ] || "$root/scripts/fashion-data.sh" "$bin" "$data"
"$bin" inspect "$data"

mpirun -np 2 --oversubscribe "$bin" train --config "$root/jobs/fashion_demo.ini" \
  --data "$data" --out "$run_dir" --resume none
echo
echo "test metrics (from $run_dir/metrics.jsonl):"
grep '"event":"done"' "$run_dir/metrics.jsonl" | tail -1
