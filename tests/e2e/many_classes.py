"""A layout-1 file of many classes for evaluation at scale (issue 60).

many_classes.py OUT.h5 CLASSES N_TRAIN N_TEST: 8 float32 features per sample around a centre
per class, labels i mod CLASSES in both splits, no class names ("0".."C-1"), no mean/std.
"""
import sys

import h5py
import numpy as np

path, classes, n_train, n_test = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
centres = rng.normal(size=(classes, 8)).astype(np.float32)
with h5py.File(path, "w") as f:
    f.attrs["format"] = "slimtrain"
    f.attrs["format_version"] = 1
    f.attrs["num_classes"] = classes
    for split, n in (("train", n_train), ("test", n_test)):
        y = np.arange(n) % classes
        x = centres[y] + 0.05 * rng.normal(size=(n, 8)).astype(np.float32)
        f.create_dataset(f"{split}/x", data=x.astype(np.float32), chunks=(min(n, 4096), 8))
        f.create_dataset(f"{split}/y", data=y.astype(np.int64))
