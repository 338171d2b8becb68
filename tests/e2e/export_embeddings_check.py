"""Recomputes `slimtrain export --embeddings` in PyTorch from the exported weights.

usage: export_embeddings_check.py make-data DIR
       export_embeddings_check.py check DATA.h5 WEIGHTS.h5 EMBEDDINGS.h5
The mlp of widths 16,8 is rebuilt from the weights file; the test split is normalised with the
data file's stored mean/std exactly as the loader does, and the features must match slimtrain's.
"""
import json
import sys

import h5py
import numpy as np
import torch


def make_data(d):
    rng = np.random.default_rng(7)
    for name, n in (("train", 96), ("test", 37)):
        y = rng.integers(0, 3, n)
        x = (rng.normal(size=(n, 12)) + y[:, None]).astype(np.float32)
        np.save(f"{d}/{name}-x.npy", x)
        np.save(f"{d}/{name}-y.npy", y.astype(np.int64))


def check(data_path, weights_path, emb_path):
    with h5py.File(weights_path, "r") as f:
        state = {k: torch.as_tensor(np.asarray(f[k][()])) for k in f.keys()}
        spec = json.loads(f.attrs["model_spec"])
    assert spec["name"] == "mlp" and spec["mlp_widths"] == [16, 8], spec
    body = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8), torch.nn.ReLU())
    body.load_state_dict({k[len("body."):]: v for k, v in state.items() if k.startswith("body.")}, strict=True)
    with h5py.File(data_path, "r") as f:
        x = np.asarray(f["test/x"][()], dtype=np.float32)
        y = np.asarray(f["test/y"][()], dtype=np.int64)
        # The loader normalises every split with the train statistics stored on /train/x.
        mean = np.asarray(f["train/x"].attrs["mean"], dtype=np.float32)
        std = np.asarray(f["train/x"].attrs["std"], dtype=np.float32)
    x = (x - mean) * np.where(std > 0, 1.0 / std, 1.0).astype(np.float32)
    with torch.no_grad():
        want = body(torch.from_numpy(x)).numpy()
    with h5py.File(emb_path, "r") as f:
        got = np.asarray(f["embeddings"][()])
        labels = np.asarray(f["labels"][()])
        assert f.attrs["split"] == "test", f.attrs["split"]
    assert got.shape == (37, 8) and got.dtype == np.float32, (got.shape, got.dtype)
    assert np.array_equal(labels, y), "labels are not the test split in row order"
    err = float(np.abs(got - want).max())
    assert err < 1e-4, f"features differ from PyTorch's by {err}"
    print(f"ok: 37 x 8 features match PyTorch (max abs difference {err:.2e}), labels in row order")


if sys.argv[1] == "make-data":
    make_data(sys.argv[2])
else:
    check(*sys.argv[2:5])
