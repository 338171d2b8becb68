#!/usr/bin/env bash
# fashion-data.sh SLIMTRAIN_BIN OUT.h5: converts Debian's Fashion-MNIST IDX files
# (dataset-fashion-mnist) into slimtrain's HDF5 layout with the class names. The one place the
# demo and the benchmarks make their data; prep writes under a temporary name, so an interrupted
# run leaves no OUT.h5 behind.
set -euo pipefail
bin=$1 out=$2
src=${FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}
[ -f "$src/train-images-idx3-ubyte.gz" ] || {
  echo "fashion-data: no $src/train-images-idx3-ubyte.gz (install dataset-fashion-mnist)" >&2
  exit 2
}
"$bin" prep idx --train-images "$src/train-images-idx3-ubyte.gz" \
  --train-labels "$src/train-labels-idx1-ubyte.gz" --test-images "$src/t10k-images-idx3-ubyte.gz" \
  --test-labels "$src/t10k-labels-idx1-ubyte.gz" \
  --class-names "T-shirt/top,Trouser,Pullover,Dress,Coat,Sandal,Shirt,Sneaker,Bag,Ankle boot" \
  -o "$out"
