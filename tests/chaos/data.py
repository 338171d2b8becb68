"""Data for the chaos campaign (tests/chaos/run.sh).

  data.py subset SRC DST ROWS   the first ROWS training rows of SRC and its whole test split,
                                with every attribute, in slimtrain's layout (version 1)
  data.py bad SRC DST ROW       a copy of SRC whose training label at ROW is out of range:
                                the sample only the rank whose stream reads ROW meets

Short runs over a subset still cover whole epochs, so a bad row is read in every trial.
"""
import shutil
import sys

import h5py


def copy_attrs(src, dst):
    for key, value in src.attrs.items():
        dst.attrs[key] = value


def subset(src, dst, rows):
    with h5py.File(src, "r") as s, h5py.File(dst, "w") as d:
        copy_attrs(s, d)
        for split in s:
            group = d.create_group(split)
            copy_attrs(s[split], group)
            for name, data in s[split].items():
                n = min(rows, data.shape[0]) if split == "train" else data.shape[0]
                chunks = (min(n, data.chunks[0]),) + data.chunks[1:] if data.chunks else None
                out = group.create_dataset(name, data=data[:n], chunks=chunks)
                copy_attrs(data, out)


def bad(src, dst, row):
    shutil.copyfile(src, dst)
    with h5py.File(dst, "r+") as f:
        classes = int(f.attrs["num_classes"])
        f["train/y"][row] = classes + 7


if __name__ == "__main__":
    what, src, dst, n = sys.argv[1:5]
    {"subset": subset, "bad": bad}[what](src, dst, int(n))
