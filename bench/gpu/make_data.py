"""Synthetic data files for bench/gpu, in slimtrain's layout (version 1), written with h5py:

  make_data.py OUT.h5 N C H W CLASSES

N uint8 images [N, C, H, W] of CLASSES classes (a class is a brighter band of rows in noise, so a
model has something to learn), chunked along N, with per-channel mean/std on /train/x. Speed does
not depend on the pixels; the files only need to be the same for slimtrain and its peer.
"""
import sys

import h5py
import numpy as np


def main():
    out, n, c, h, w, classes = sys.argv[1], *map(int, sys.argv[2:7])
    rng = np.random.default_rng(7)
    y = rng.integers(0, classes, n).astype(np.int64)
    x = rng.integers(0, 160, (n, c, h, w), dtype=np.uint8)
    band = max(1, h // classes)
    for k in range(classes):
        rows = y == k
        x[rows, :, k * band:(k + 1) * band, :] += 90
    with h5py.File(out, "w") as f:
        f.attrs["format"] = "slimtrain"
        f.attrs["format_version"] = 1
        f.attrs["num_classes"] = classes
        f.attrs["class_names"] = [f"c{k}" for k in range(classes)]
        rows_per_chunk = min(n, max(1, (1 << 20) // (c * h * w)))
        d = f.create_dataset("train/x", data=x, chunks=(rows_per_chunk, c, h, w))
        d.attrs["mean"] = x.reshape(n, c, -1).mean(axis=(0, 2)).astype(np.float32)
        d.attrs["std"] = x.reshape(n, c, -1).std(axis=(0, 2)).astype(np.float32)
        f.create_dataset("train/y", data=y)


if __name__ == "__main__":
    main()
