#!/bin/sh
# Runs bench_prep at one rank and two. Usage: bench/prep/run.sh [build-dir] [data-dir]
set -e
build=${1:-build}
data=${2:-/usr/share/datasets/fashion-mnist}
bin="$build/bench/prep/bench_prep"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
"$bin" "$data"
mpirun -np 2 "$bin" "$data"
# Uncompressed copies: each rank maps them and reads only its own records' pages.
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
for f in "$data"/*-ubyte.gz; do zcat "$f" > "$raw/$(basename "$f" .gz)"; done
"$bin" "$raw" 3 ""
mpirun -np 2 "$bin" "$raw" 3 ""
# Image folders against the Python peer (PIL + h5py).
"$(dirname "$0")/images.sh" "$build"
# Text: prep text against python3-sentencepiece + h5py (the tokenizer peer).
"$(dirname "$0")/text.sh" "$build"
