"""The python3-h5py peer of bench_reader: the loops a Python user who cares would write, reading
/train in the given order (int64 row indices) batch by batch and normalising to float32 as the
loader does. Prints one line: PEER samples_per_s=... mb_per_s=... load_s=... batches=...

  memory: the whole split loaded with one read (timed: its samples/s include the load), then
          each batch gathered from memory with numpy indexing
  stream: contiguous reads of whole chunk-aligned blocks, one shuffle window at a time (WINDOW
          rows, as the loader's buffer), each batch gathered from the window in the given order

usage: /usr/bin/python3 h5py_peer.py FILE ORDER_FILE BATCH memory|stream [WINDOW]"""
import sys
import time

import h5py
import numpy as np

path, order_file, batch, mode = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
window = int(sys.argv[5]) if len(sys.argv) > 5 else 0
order = np.fromfile(order_file, dtype=np.int64)
with h5py.File(path, "r") as f:
    x_ds, y_ds = f["train/x"], f["train/y"]
    mean = np.float32(x_ds.attrs["mean"][0])
    inv_std = np.float32(1.0 / x_ds.attrs["std"][0])
    row_bytes = int(np.prod(x_ds.shape[1:])) * x_ds.dtype.itemsize
    start = time.perf_counter()
    samples = batches = 0
    load = 0.0
    if mode == "memory":
        x_all, y_all = x_ds[...], y_ds[...].astype(np.int64)
        load = time.perf_counter() - start
        for b in range(0, len(order), batch):
            rows = order[b:b + batch]
            x = (x_all[rows].astype(np.float32) - mean) * inv_std
            y = y_all[rows]
            samples += len(rows)
            batches += 1
    else:
        for w in range(0, len(order), window):
            rows = order[w:w + window]
            # The window's rows are whole runs of consecutive rows (blocks): read each run once.
            unique = np.unique(rows)
            breaks = np.flatnonzero(np.diff(unique) != 1) + 1
            xs, ys = [], []
            for run in np.split(unique, breaks):
                xs.append(x_ds[run[0]:run[-1] + 1])
                ys.append(y_ds[run[0]:run[-1] + 1])
            x_win, y_win = np.concatenate(xs), np.concatenate(ys).astype(np.int64)
            where = np.searchsorted(unique, rows)
            for b in range(0, len(rows), batch):
                pick = where[b:b + batch]
                x = (x_win[pick].astype(np.float32) - mean) * inv_std
                y = y_win[pick]
                samples += len(pick)
                batches += 1
    seconds = time.perf_counter() - start
print(f"PEER samples_per_s={samples / seconds:.0f} mb_per_s={samples * row_bytes / seconds / 1e6:.1f} "
      f"load_s={load:.3f} batches={batches}")
