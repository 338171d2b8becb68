"""Files from the wild, made here for tests/e2e/wild_files.sh (Debian's python3: torch 1.13, h5py).

  wild_files.py frozen OUT.pt       a TorchScript module whose weights are frozen into constants
                                    (torch.jit.freeze, as mobile-optimised .ptl files): no
                                    parameter left to train
  wild_files.py unknown-op OUT.pt   a module calling an operator of its own library
                                    (wild::shuffle_rows, defined in Python with torch.library):
                                    LibTorch has no such operator
  wild_files.py open-for-write OUT.h5   slimtrain's layout in a file whose superblock still says
                                    "open for write" (written with libver latest, never closed)
  wild_files.py lzf OUT.h5          slimtrain's layout with /train/x compressed by h5py's LZF
                                    filter, which this HDF5 does not have
  wild_files.py external OUT.h5     slimtrain's layout whose /train/x is an external link into a
                                    file that does not exist
  wild_files.py plain OUT.h5        slimtrain's layout, nothing wrong: 64 2x2 images of 2 classes
  wild_files.py rows OUT.h5 N       N training rows of one byte each, every chunk unwritten (read
                                    as the fill value): a file of N rows in a few KiB
"""
import os
import shutil
import sys

import h5py
import numpy as np


def layout(f, n=64, x_kwargs=None, x=True):
    f.attrs["format"] = "slimtrain"
    f.attrs["format_version"] = 1
    f.attrs["num_classes"] = 2
    f.attrs["class_names"] = ["a", "b"]
    if x:
        d = f.create_dataset("train/x", data=np.arange(n * 4, dtype=np.uint8).reshape(n, 2, 2),
                             **(x_kwargs or {}))
        d.attrs["mean"] = [1.0]
        d.attrs["std"] = [1.0]
    f.create_dataset("train/y", data=(np.arange(n) % 2).astype(np.int64))


def main():
    what, out = sys.argv[1], sys.argv[2]
    if what in ("frozen", "unknown-op"):
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(4, 2)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.fc(x.flatten(1))

        if what == "frozen":
            torch.jit.freeze(torch.jit.script(Net()).eval()).save(out)
            return
        lib = torch.library.Library("wild", "DEF")
        lib.define("shuffle_rows(Tensor x) -> Tensor")
        lib.impl("shuffle_rows", lambda x: x.flip(0), "CPU")

        class Custom(Net):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.fc(torch.ops.wild.shuffle_rows(x.flatten(1)))

        torch.jit.script(Custom()).save(out)
    elif what == "open-for-write":
        # The superblock's status flags are set while a writer (libver latest) has the file open;
        # a copy taken then is what a crashed writer leaves.
        with h5py.File(out + ".tmp", "w", libver="latest") as f:
            layout(f)
            f.flush()
            shutil.copy(out + ".tmp", out)
        os.remove(out + ".tmp")
    elif what == "plain":
        with h5py.File(out, "w") as f:
            layout(f)
    elif what == "lzf":
        with h5py.File(out, "w") as f:
            layout(f, x_kwargs={"compression": "lzf", "chunks": (16, 2, 2)})
    elif what == "external":
        with h5py.File(out, "w") as f:
            layout(f, x=False)
            f["train/x"] = h5py.ExternalLink("gone.h5", "/train/x")
    elif what == "rows":
        n = int(sys.argv[3])
        with h5py.File(out, "w") as f:
            f.attrs["format"] = "slimtrain"
            f.attrs["format_version"] = 1
            f.attrs["num_classes"] = 2
            x = f.create_dataset("train/x", (n, 1), np.uint8, chunks=(1 << 16, 1), fillvalue=3)
            x.attrs["mean"] = [3.0]
            x.attrs["std"] = [1.0]
            f.create_dataset("train/y", (n,), np.int64, chunks=(1 << 16,), fillvalue=1)
    else:
        sys.exit(f"unknown: {what}")


if __name__ == "__main__":
    main()
