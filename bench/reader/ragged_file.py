"""A layout-2 file for bench_ragged: N token sequences whose lengths follow a long tail as real
text's do (log-normal, median 60, cut to [1, 512]), vocab_size 30000, 8 classes.
python3 ragged_file.py OUT.h5 [N]"""
import sys

import h5py
import numpy as np

out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20000
rng = np.random.default_rng(1)
lengths = np.clip(rng.lognormal(np.log(60), 0.8, n).astype(np.int64), 1, 512)
with h5py.File(out, "w") as f:
    f.attrs["format"] = "slimtrain"
    f.attrs["format_version"] = 2
    f.attrs["num_classes"] = 8
    ids = f.create_group("train/inputs/input_ids")
    ids.create_dataset("values", data=rng.integers(1, 30000, int(lengths.sum()), dtype=np.int64))
    ids.create_dataset("offsets", data=np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
    ids.attrs["vocab_size"] = 30000
    f["train"].create_dataset("y", data=rng.integers(0, 8, n).astype(np.int64))
