"""The python3-h5py peer of bench_reader: reads /train in the given order (int64 row indices),
batch by batch, with the usual h5py fancy indexing, and normalises to float32 like the loader.
Prints one line: PEER samples_per_s=... mb_per_s=... batches=...
usage: /usr/bin/python3 h5py_peer.py FILE ORDER_FILE BATCH MAX_BATCHES"""
import sys
import time

import h5py
import numpy as np

path, order_file, batch, max_batches = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
order = np.fromfile(order_file, dtype=np.int64)
with h5py.File(path, "r") as f:
    x_ds, y_ds = f["train/x"], f["train/y"]
    mean = np.float32(x_ds.attrs["mean"][0])
    inv_std = np.float32(1.0 / x_ds.attrs["std"][0])
    row_bytes = int(np.prod(x_ds.shape[1:])) * x_ds.dtype.itemsize
    start = time.perf_counter()
    samples = batches = 0
    for b in range(0, len(order), batch):
        if batches == max_batches:
            break
        rows = order[b:b + batch]
        sorted_rows = np.sort(rows)  # h5py needs increasing indices
        back = np.argsort(np.argsort(rows))
        x = x_ds[sorted_rows][back]
        y = y_ds[sorted_rows][back].astype(np.int64)
        x = (x.astype(np.float32) - mean) * inv_std
        samples += len(rows)
        batches += 1
    seconds = time.perf_counter() - start
print(f"PEER samples_per_s={samples / seconds:.0f} mb_per_s={samples * row_bytes / seconds / 1e6:.1f} batches={batches}")
